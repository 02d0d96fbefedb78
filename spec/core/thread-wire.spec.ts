import {
  addToRun,
  eachToMainAlone,
  eachToThreadAlone,
  type MainSide,
  type RecordOfMessage,
  readToMain,
  readToThread,
  type ThreadSide,
  writeAnnounce,
  writeClose,
  writeData,
  writeDone,
  writeFailed,
  writeNext,
  writeNoData,
  writeOpen,
  writePage,
  writeRelease,
  writeRetry,
  writeRun,
  writeStop,
  writeWaited,
  writeWant,
} from '../../src/threads/wire';

/** A thread side that logs every record it reads, by name; channel 9 is unknown to it. */
function loggingThread(log: unknown[]): ThreadSide {
  return {
    open: (...fields) => log.push(['open', ...fields]),
    channel: (channel) =>
      channel === 9
        ? undefined
        : {
            run: (...fields) => log.push(['run', channel, ...fields]),
            page: (page) => log.push(['page', channel, page]),
            retry: (...fields) => log.push(['retry', channel, ...fields]),
            release: (messageId) => log.push(['release', channel, messageId]),
            announce: (...fields) => log.push(['announce', channel, ...fields]),
            data: (...fields) => log.push(['data', channel, ...fields]),
            noData: (messageId) => log.push(['noData', channel, messageId]),
            waited: (...fields) => log.push(['waited', channel, ...fields]),
          },
    close: (channel) => log.push(['close', channel]),
    stop: () => log.push(['stop']),
  };
}

function loggingMain(log: unknown[]): MainSide {
  return {
    want: (messageId) => log.push(['want', messageId]),
    next: (...fields) => log.push(['next', ...fields]),
    done: (messageId) => log.push(['done', messageId]),
    failed: (...fields) => log.push(['failed', ...fields]),
  };
}

describe('the records of the thread protocol', () => {
  const page = new Int32Array(4);

  function mainBatch(): unknown[] {
    const batch: unknown[] = [];
    writeOpen(batch, 1, 'file:///h.js', 'handle', 16, [page], true);
    const countAt = writeRun(batch, 1);
    addToRun(batch, countAt, 7, 100, 3, 'k1', { n: 1 });
    addToRun(batch, countAt, 8, 101, 4, 'k2', { n: 2 });
    writePage(batch, 1, page);
    writeRetry(batch, 1, 100, -1);
    writeRelease(batch, 1, 100);
    writeAnnounce(batch, 1, 7, 102, 5, 'k1');
    writeData(batch, 1, 102, { n: 3 });
    writeNoData(batch, 1, 103);
    writeWaited(batch, 1, 104, 1_700_000_000_000.5, -1);
    const lost = writeRun(batch, 9);
    addToRun(batch, lost, 1, 200, 0, 'k', 'm');
    writeClose(batch, 1);
    writeStop(batch);
    return batch;
  }

  it('reads back, by name and in order, what the main thread wrote', () => {
    const log: unknown[] = [];
    readToThread(mainBatch(), loggingThread(log));
    expect(log).toEqual([
      ['open', 1, 'file:///h.js', 'handle', 16, [page], true],
      ['run', 1, 7, 100, 3, 'k1', { n: 1 }],
      ['run', 1, 8, 101, 4, 'k2', { n: 2 }],
      ['page', 1, page],
      ['retry', 1, 100, -1],
      ['release', 1, 100],
      ['announce', 1, 7, 102, 5, 'k1'],
      ['data', 1, 102, { n: 3 }],
      ['noData', 1, 103],
      ['waited', 1, 104, 1_700_000_000_000.5, -1],
      ['close', 1],
      ['stop'],
    ]);
  });

  it('splits a batch for a thread into records of their own, one RUN per message', () => {
    const alone: Array<[unknown[], RecordOfMessage]> = [];
    eachToThreadAlone(mainBatch(), (record, of) => alone.push([record, of]));
    expect(alone.map(([, of]) => of)).toEqual([
      undefined,
      { messageId: 100, part: 'whole' },
      { messageId: 101, part: 'whole' },
      undefined,
      undefined,
      undefined,
      { messageId: 102, part: 'ticket' },
      { messageId: 102, part: 'data' },
      undefined,
      undefined,
      { messageId: 200, part: 'whole' },
      undefined,
      undefined,
    ]);
    const log: unknown[] = [];
    for (const [record] of alone) readToThread(record, loggingThread(log));
    const whole: unknown[] = [];
    readToThread(mainBatch(), loggingThread(whole));
    expect(log).toEqual(whole);
  });

  it('reads back what a thread wrote, and splits it into records of their own', () => {
    const batch: unknown[] = [];
    writeWant(batch, 4);
    writeNext(batch, 5, 'value');
    writeDone(batch, 5);
    writeFailed(batch, 6, 'boom');
    const log: unknown[] = [];
    readToMain(batch, loggingMain(log));
    expect(log).toEqual([
      ['want', 4],
      ['next', 5, 'value'],
      ['done', 5],
      ['failed', 6, 'boom'],
    ]);
    const starts: number[] = [];
    const again: unknown[] = [];
    eachToMainAlone(batch, (record, at) => {
      starts.push(at);
      readToMain(record, loggingMain(again));
    });
    expect(starts).toEqual([0, 2, 5, 7]);
    expect(again).toEqual(log);
  });
});
