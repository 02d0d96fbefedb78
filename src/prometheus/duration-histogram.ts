import { DURATION } from './instruments';

/** Handler durations counted into the Prometheus buckets of `DURATION` (cumulative when read). */
export class DurationHistogram {
  /** Recordings per bucket, not cumulative; the last one is above every bound (`+Inf`). */
  private readonly counts = new Float64Array(DURATION.buckets.length + 1);
  count = 0;
  /** Sum of the recorded durations in seconds. */
  sum = 0;

  record(ms: number): void {
    const seconds = ms / 1000;
    const bounds = DURATION.buckets;
    let i = 0;
    while (i < bounds.length && seconds > bounds[i]) i++;
    this.counts[i]++;
    this.count++;
    this.sum += seconds;
  }

  /** `[upper bound, recordings at or below it]`, ending with `+Inf` and the count. */
  cumulative(): Array<[number, number]> {
    const out: Array<[number, number]> = [];
    let seen = 0;
    DURATION.buckets.forEach((bound, i) => {
      seen += this.counts[i];
      out.push([bound, seen]);
    });
    out.push([Number.POSITIVE_INFINITY, this.count]);
    return out;
  }
}
