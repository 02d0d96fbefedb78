import { HeldDemo } from './held-demo';

const SUMMARY_END = /per-key order violations +0\n/;
const RUN_TIMEOUT = 120_000;

/** The backlog of the hottest key, as the dashboard's Prometheus endpoint gives it; null when it does not answer. */
async function hottestBacklog(url: string): Promise<number | null> {
  try {
    const text = await (await fetch(new URL('metrics', url))).text();
    const line = /^keyed_dispatch_hottest_key_backlog(?:\{[^}]*\})? (\d+)$/m.exec(text);
    return line === null ? null : Number(line[1]);
  } catch {
    return null;
  }
}

describe("the demo's dashboard (npm start)", () => {
  it(
    'still answers once the summary is printed, while the demo waits for Enter, and is said to have stopped after it',
    async () => {
      const demo = HeldDemo.start([]);
      try {
        const url = await demo.url();
        await demo.printedMatch(SUMMARY_END, RUN_TIMEOUT);
        await demo.printedMatch(/still up: press Enter to stop it\n/);
        const page = await fetch(url);
        expect(page.status).toBe(200);
        await page.text();
        expect(await hottestBacklog(url)).not.toBeNull();

        demo.type('\n');
        expect(await demo.exited(RUN_TIMEOUT)).toEqual({ code: 0, signal: null });
        const [, after] = demo.printed.split(SUMMARY_END);
        expect(after).toMatch(/^dashboard stopped$/m);
        expect(await hottestBacklog(url)).toBeNull();
      } finally {
        demo.kill();
      }
    },
    RUN_TIMEOUT * 2,
  );

  it(
    'shows a backlog of over 100 messages on the hot key while it runs',
    async () => {
      const demo = HeldDemo.start();
      try {
        const url = await demo.url();
        let largest = 0;
        const end = Date.now() + 30_000;
        while (largest <= 100 && Date.now() < end) {
          largest = Math.max(largest, (await hottestBacklog(url)) ?? 0);
          await new Promise((resolve) => setTimeout(resolve, 50));
        }
        expect(largest).toBeGreaterThan(100);
        demo.signal('SIGTERM');
        expect(await demo.exited(RUN_TIMEOUT)).toEqual({ code: 0, signal: null });
      } finally {
        demo.kill();
      }
    },
    RUN_TIMEOUT,
  );
});
