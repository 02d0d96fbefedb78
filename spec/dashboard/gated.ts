import { type DispatchMetrics, fromIterable, keyedDispatch } from 'keyed-dispatch';
import { type Observable, Subject } from 'rxjs';

export interface Keyed {
  key: unknown;
  seq: number;
}

/**
 * A dispatcher whose handlers run until the spec opens their gate: messages of `keys` (in order) stay in
 * flight, so backlogs and the window hold still while the spec looks at them.
 */
export function gated(metrics: DispatchMetrics, keys: readonly unknown[], maxInFlight?: number) {
  const gates: Array<{ key: unknown; gate: Subject<void> }> = [];
  const subscription = fromIterable<Keyed>(keys.map((key, seq) => ({ key, seq })))
    .pipe(
      keyedDispatch({
        stats: metrics,
        maxInFlight,
        // Given a window, the per-key share is off: one key can fill all of it.
        maxPerKey: maxInFlight,
        key: (m: Keyed) => m.key,
        handle: (m: Keyed) => {
          const gate = new Subject<void>();
          gates.push({ key: m.key, gate });
          return gate as Observable<void>;
        },
      }),
    )
    .subscribe();
  return {
    /** Completes the running handler of `key`. */
    finish(key: unknown): void {
      const i = gates.findIndex((g) => g.key === key);
      if (i < 0) throw new Error(`no handler of ${String(key)} is running`);
      gates.splice(i, 1)[0].gate.complete();
    },
    stop: () => subscription.unsubscribe(),
  };
}

/** `n` copies of `key`. */
export const times = (n: number, key: string): string[] => Array.from({ length: n }, () => key);
