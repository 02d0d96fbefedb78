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
    mailbox.post('a');
    mailbox.post('b');
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
    mailbox.post('old');
    // Left running: the mailbox is pooled and opened again, and a new handler starts.
    mailbox.reset();
    mailbox.open('k', lane, owner);
    mailbox.post('new');
    first.resolve('stale');
    await settle();
    expect(log).toEqual([]);
    second.resolve('fresh');
    await settle();
    expect(log).toEqual(['value fresh', 'done new', 'retired']);
  });
});
