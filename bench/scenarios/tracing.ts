import { from } from 'rxjs';
import { KeyedExecutor, keyedDispatch } from '../../src';
import { traced } from '../../src/otel';
import { alternate, ratios, series } from '../harness';
import type { Scenario } from '../report';
import { median, rate, ratioCell, table, times } from '../stats';

/**
 * What tracing costs a dispatcher when no SDK is set up: keyedDispatch without `traced` (tracing off:
 * none of its code runs) against the same options wrapped in `traced` with only `@opentelemetry/api`
 * loaded, whose tracer is then a no-op. In one process, alternating.
 */

const MESSAGES = 100_000;
const KEYS = 1_000;

interface Message {
  key: number;
  seq: number;
}

const input = Array.from({ length: MESSAGES }, (_, seq): Message => ({ key: seq % KEYS, seq }));

function run(options: Parameters<typeof keyedDispatch<Message, number, Message>>[0]) {
  return () =>
    new Promise<Record<string, number>>((resolve, reject) => {
      const start = performance.now();
      let n = 0;
      from(input)
        .pipe(keyedDispatch(options))
        .subscribe({
          next: () => n++,
          error: reject,
          complete: () => resolve({ rate: n / ((performance.now() - start) / 1000) }),
        });
    });
}

const scenario: Scenario = {
  title: 'tracing: keyedDispatch without `traced` against `traced` with no SDK set up',
  async run({ rounds = 21 }) {
    const executor = new KeyedExecutor();
    const options = { key: (m: Message) => m.key, handle: async (m: Message) => m, executor };
    const tracing = { system: 'bench', describe: () => ({ destination: 'bench', attributes: {} }) };
    const measured = await alternate(
      { off: run(options), noSdk: run(traced(options, tracing)) },
      { warmups: 2, rounds },
    );
    const noSdk = ratios(measured, 'noSdk', 'off');
    const rows = [
      ['tracing off (no `traced`)', rate(median(series(measured, 'off'))), '—'],
      ['`traced`, no SDK (no-op tracer)', rate(median(series(measured, 'noSdk'))), ratioCell(noSdk)],
    ];
    return {
      method: `${MESSAGES.toLocaleString('en')} messages over ${KEYS.toLocaleString('en')} keys from an array, handler \`async (m) => m\`, one process, the two contenders alternating (two unmeasured runs each, then ${rounds} rounds). Tracing off is keyedDispatch without \`traced\`: no tracing code runs, so it is keyedDispatch itself. The ratio is the median of per-round ratios of the traced rate to the plain one (min–max).`,
      tables: table(['contender', 'msgs/s', 'rate ÷ tracing off'], rows),
      figures: { 'no-sdk': times(median(noSdk)) },
    };
  },
};

export default scenario;
