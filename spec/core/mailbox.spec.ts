import type { ObservableInput } from 'rxjs';
import { Lane } from '../../src/engine/lane';
import { LaneLoop } from '../../src/engine/lane-loop';
import { Mailbox, type MailboxOwner } from '../../src/engine/mailbox';
import { deferred } from '../support/waits';

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
    const first = deferred<string>();
    const second = deferred<string>();
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

  describe('posted in a refill (`LaneLoop.beginRefill`) while its lane runs a turn', () => {
    /**
     * Two lanes of one loop and an owner whose handlers record their start and return `result(message)`;
     * `onDone(message)` runs when a handler completes. `open(key)` opens a mailbox on lane 0;
     * `postInRefill(mailbox, message)` posts as a dispatcher's refill does; `waitOnOtherLane()` queues a
     * runnable on lane 1.
     */
    function lanes(result: (message: string) => ObservableInput<string>, onDone: (message: string) => void) {
      const loop = new LaneLoop();
      const lane = new Lane(0, loop);
      const other = new Lane(1, loop);
      const started: string[] = [];
      // `closed` left writable, so a spec can close the owner.
      const owner: MailboxOwner<string, string, string> & { closed: boolean } = {
        throughput: 16,
        closed: false,
        claim: () => true,
        handle: (message) => {
          started.push(message);
          return result(message);
        },
        emit: () => undefined,
        done: (_mailbox, message) => onDone(message),
        failed: () => undefined,
        retire: () => undefined,
      };
      const open = (key: string, on = lane) => new Mailbox<string, string, string>().open(key, on, owner);
      const waitOnOtherLane = () =>
        loop.enqueue(other, {
          nextInLine: null,
          run: () => {
            started.push('other');
            return 1;
          },
        });
      const postInRefill = (mailbox: Mailbox<string, string, string>, message: string) => {
        loop.beginRefill();
        try {
          mailbox.post(message);
        } finally {
          loop.endRefill();
        }
      };
      return { loop, lane, other, owner, started, open, postInRefill, waitOnOtherLane };
    }
    const names = (from: number, to: number) => Array.from({ length: to - from }, (_, i) => `n${from + i}`);

    /**
     * Mailbox `a` holds a1 and a2; when a1's Promise settles, its `done` posts the first message of
     * `fresh` new mailboxes on the same lane in a refill. Returns the order handlers started.
     */
    async function refillDuringCompletion(fresh: number, otherLaneWaits = false): Promise<string[]> {
      const { loop, started, open, postInRefill, waitOnOtherLane } = lanes(
        (message) => Promise.resolve(message),
        (message) => {
          if (message !== 'a1') return;
          if (otherLaneWaits) waitOnOtherLane();
          for (let i = 0; i < fresh; i++) postInRefill(open(`n${i}`), `n${i}`);
        },
      );
      const a = open('a');
      loop.batchAdmissions();
      a.post('a1');
      a.post('a2');
      loop.flushAdmissions();
      await settle();
      return started;
    }

    it('starts nothing once its owner has closed (a key selector that stopped the dispatcher), keeping the message', () => {
      const { loop, lane, owner, started, open, postInRefill } = lanes(
        (message) => [message],
        () => undefined,
      );
      owner.closed = true;
      const mailbox = open('k');
      // Posted from inside a turn of its lane, as a refill is.
      loop.enqueue(lane, {
        nextInLine: null,
        run: () => {
          postInRefill(mailbox, 'late');
          return 1;
        },
      });
      expect(started).toEqual([]);
      expect(mailbox.queuedMessages()).toEqual(['late']);
    });

    it('starts at once, inside the completing turn, ahead of the rest of that turn', async () => {
      expect(await refillDuringCompletion(2)).toEqual(['a1', 'n0', 'n1', 'a2']);
    });

    it('starts at most the 16 handlers of a lane step so; the others wait their turn in the FIFO', async () => {
      expect(await refillDuringCompletion(20)).toEqual(['a1', ...names(0, 16), 'a2', ...names(16, 20)]);
    });

    it('counts what it started in the step of the turn it started in, so a waiting lane gets the thread after 16', () => {
      const { loop, started, open, postInRefill, waitOnOtherLane } = lanes(
        (message) => [message],
        (message) => {
          if (message !== 'a') return;
          // 1 + 15 started in this step: then the lane waiting behind it runs before a2.
          for (let i = 0; i < 15; i++) postInRefill(open(`n${i}`), `n${i}`);
          open('a2').post('a2');
          waitOnOtherLane();
        },
      );
      loop.batchAdmissions();
      open('a').post('a');
      loop.flushAdmissions();
      expect(started).toEqual(['a', ...names(0, 15), 'other', 'a2']);
    });

    it("starts on an idle lane as that lane's turn, and not while work waits on the running lane", async () => {
      const current: string[] = [];
      let lanesSeen: { loop: LaneLoop; other: Lane } | undefined;
      const { loop, other, started, open, postInRefill } = lanes(
        (message) => {
          current.push(`${message}@${(lanesSeen?.loop.current as Lane | null)?.index}`);
          return Promise.resolve(message);
        },
        (message) => {
          if (message === 'a1') {
            postInRefill(open('m', other), 'm');
            open('q').post('q');
            postInRefill(open('n', other), 'n');
            started.push('a1 done');
          }
        },
      );
      lanesSeen = { loop, other };
      const a = open('a');
      loop.batchAdmissions();
      a.post('a1');
      loop.flushAdmissions();
      await settle();
      // m starts at once on the idle lane 1, as a turn of lane 1; n waits (q waits on the running lane),
      // and runs in lane 1's next turn, before lane 0 gets the thread back for q.
      expect(started).toEqual(['a1', 'm', 'a1 done', 'n', 'q']);
      expect(current).toEqual(['a1@0', 'm@1', 'n@1', 'q@0']);
    });

    it('waits in the FIFO when another lane waits for the thread', async () => {
      expect(await refillDuringCompletion(2, true)).toEqual(['a1', 'a2', 'other', 'n0', 'n1']);
    });
  });
});
