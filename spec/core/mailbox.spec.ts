import { Lane } from '../../src/engine/lane';
import { LaneLoop } from '../../src/engine/lane-loop';
import { Mailbox, type MailboxOwner } from '../../src/engine/mailbox';

/** An owner that runs each message's handler from `handlers` and records what its mailboxes report. */
function recordingOwner(handlers: Map<string, () => Promise<string>>) {
  const log: string[] = [];
  const owner: MailboxOwner<string, string, string> = {
    throughput: 16,
    closed: false,
    claim: () => true,
    handle: (message) => (handlers.get(message) as () => Promise<string>)(),
    emit: (value) => log.push(`value ${value}`),
    done: (_mailbox, message) => log.push(`done ${message}`),
    failed: (_mailbox, message) => log.push(`failed ${message}`),
    retire: () => log.push('retired'),
  };
  return { owner, log };
}

function deferred(): { promise: Promise<string>; resolve: (value: string) => void } {
  let resolve!: (value: string) => void;
  const promise = new Promise<string>((r) => (resolve = r));
  return { promise, resolve };
}

const settle = () => new Promise((r) => setImmediate(r));

describe('Mailbox', () => {
  it('settles a Promise handler with its own value, message after message', async () => {
    const handlers = new Map([
      ['a', () => Promise.resolve('A')],
      ['b', () => Promise.resolve('B')],
    ]);
    const { owner, log } = recordingOwner(handlers);
    const mailbox = new Mailbox<string, string, string>().open('k', new Lane(0, new LaneLoop()), owner);
    mailbox.post('a', false);
    mailbox.post('b', false);
    await settle();
    expect(log).toEqual(['value A', 'done a', 'value B', 'done b', 'retired']);
  });

  it('ignores the late settlement of a Promise left running when the mailbox was reset and reused', async () => {
    const first = deferred();
    const second = deferred();
    const handlers = new Map([
      ['old', () => first.promise],
      ['new', () => second.promise],
    ]);
    const { owner, log } = recordingOwner(handlers);
    const lane = new Lane(0, new LaneLoop());
    const mailbox = new Mailbox<string, string, string>().open('k', lane, owner);
    mailbox.post('old', false);
    // Left running: the mailbox is pooled and opened again, and a new handler starts.
    mailbox.reset();
    mailbox.open('k', lane, owner);
    mailbox.post('new', false);
    first.resolve('stale');
    await settle();
    expect(log).toEqual([]);
    second.resolve('fresh');
    await settle();
    expect(log).toEqual(['value fresh', 'done new', 'retired']);
  });

  describe('posted with `startNow` while its lane runs a turn', () => {
    /**
     * Mailbox `a` holds a1 and a2 on a lane; when a1's Promise settles, its `done` posts the first message
     * of `fresh` new mailboxes on the same lane with `startNow` (a refill). Returns the order handlers started.
     */
    async function refillDuringCompletion(fresh: number, otherLaneWaits = false): Promise<string[]> {
      const loop = new LaneLoop();
      const lane = new Lane(0, loop);
      const other = new Lane(1, loop);
      const started: string[] = [];
      const owner: MailboxOwner<string, string, string> = {
        throughput: 16,
        closed: false,
        claim: () => true,
        handle: (message) => {
          started.push(message);
          return Promise.resolve(message);
        },
        emit: () => undefined,
        done: (_mailbox, message) => {
          if (message !== 'a1') return;
          if (otherLaneWaits)
            loop.enqueue(other, {
              nextInLine: null,
              run: () => {
                started.push('other');
                return 1;
              },
            });
          for (let i = 0; i < fresh; i++)
            new Mailbox<string, string, string>().open(`n${i}`, lane, owner).post(`n${i}`, true);
        },
        failed: () => undefined,
        retire: () => undefined,
      };
      const a = new Mailbox<string, string, string>().open('a', lane, owner);
      loop.hold();
      a.post('a1', false);
      a.post('a2', false);
      loop.release();
      await settle();
      return started;
    }
    const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `n${from + i}`);

    it('starts at once, inside the completing turn, ahead of the rest of that turn', async () => {
      expect(await refillDuringCompletion(2)).toEqual(['a1', 'n0', 'n1', 'a2']);
    });

    it('starts at most the 16 handlers of a lane step so; the others wait their turn in the FIFO', async () => {
      expect(await refillDuringCompletion(20)).toEqual(['a1', ...names(0, 16), 'a2', ...names(16, 20)]);
    });

    it('counts what it started in the step of the turn it started in, so a waiting lane gets the thread after 16', () => {
      const loop = new LaneLoop();
      const lane = new Lane(0, loop);
      const other = new Lane(1, loop);
      const started: string[] = [];
      const owner: MailboxOwner<string, string, string> = {
        throughput: 16,
        closed: false,
        claim: () => true,
        handle: (message) => {
          started.push(message);
          return [message];
        },
        emit: () => undefined,
        done: (_mailbox, message) => {
          if (message !== 'a') return;
          // 1 + 15 started in this step: then the lane waiting behind it runs before a2.
          for (let i = 0; i < 15; i++)
            new Mailbox<string, string, string>().open(`n${i}`, lane, owner).post(`n${i}`, true);
          new Mailbox<string, string, string>().open('a2', lane, owner).post('a2', false);
          loop.enqueue(other, {
            nextInLine: null,
            run: () => {
              started.push('other');
              return 1;
            },
          });
        },
        failed: () => undefined,
        retire: () => undefined,
      };
      loop.hold();
      new Mailbox<string, string, string>().open('a', lane, owner).post('a', false);
      loop.release();
      expect(started).toEqual(['a', ...names(0, 15), 'other', 'a2']);
    });

    it('waits in the FIFO when another lane waits for the thread', async () => {
      expect(await refillDuringCompletion(2, true)).toEqual(['a1', 'a2', 'other', 'n0', 'n1']);
    });
  });
});
