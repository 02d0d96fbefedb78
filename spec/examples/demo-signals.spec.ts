import { HeldDemo } from './held-demo';

/** A live line of the held demo: seconds, messages handled, throughput, handler latency, the window. */
const LIVE_LINE =
  /^ *(\d+) s +([\d,]+) handled +([\d,]+) msgs\/s +handler p50 +[\d.]+ ms p99 +[\d.]+ ms +in flight +\d+\/256 +hot /;
const SUMMARY = /messages handled +([\d,]+) over 10,000 keys\n/;
const STOP_TIMEOUT = 60_000;

const integer = (text: string) => Number(text.replace(/,/g, ''));

describe('the demo held (npm start -- --hold)', () => {
  it.each([
    ['SIGTERM to npm start (as a process manager stops it)', (demo: HeldDemo) => demo.signal('SIGTERM')],
    [
      'Ctrl-C (SIGINT to the whole process group, as a terminal sends it)',
      (demo: HeldDemo) => demo.signalGroup('SIGINT'),
    ],
  ])(
    'stops with its summary and exits on %s, having shown throughput and latency while it ran',
    async (_how, stop) => {
      const demo = HeldDemo.start();
      try {
        await demo.url();
        const lines = await demo.waitForLiveLines(3);
        // A count that only grows, not progress through a round that starts again at 0 %.
        const shown = lines.map((line) => {
          const match = LIVE_LINE.exec(line);
          if (match === null) throw new Error(`not a live line: ${JSON.stringify(line)}`);
          return { seconds: Number(match[1]), handled: integer(match[2]), perSecond: integer(match[3]) };
        });
        for (let i = 1; i < shown.length; i++) {
          expect(shown[i].handled).toBeGreaterThan(shown[i - 1].handled);
          expect(shown[i].seconds).toBeGreaterThan(shown[i - 1].seconds);
        }
        expect(shown[shown.length - 1].perSecond).toBeGreaterThan(0);
        expect(demo.printed).not.toMatch(/\[[#.]+\]|\d+ ?%/);

        stop(demo);
        expect(await demo.exited(STOP_TIMEOUT)).toEqual({ code: 0, signal: null });
        const summary = SUMMARY.exec(demo.printed);
        expect(summary).not.toBeNull();
        expect(integer((summary as RegExpExecArray)[1])).toBeGreaterThanOrEqual(
          shown[shown.length - 1].handled,
        );
        expect(demo.printed).toMatch(/latency send → handled +p50 [\d.]+ ms, p99 [\d.]+ ms\n/);
        expect(demo.printed).toMatch(/per-key order violations +0\n/);
        expect(demo.printed).toMatch(/live mailboxes at end +0 /);
        // Nothing of it is left serving: npm, the demo and their helpers are gone.
        const end = Date.now() + 10_000;
        while (demo.groupAlive() && Date.now() < end) await new Promise((resolve) => setTimeout(resolve, 50));
        expect(demo.groupAlive()).toBe(false);
      } finally {
        demo.kill();
      }
    },
    STOP_TIMEOUT * 3,
  );
});
