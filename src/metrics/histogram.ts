/**
 * Log-linear buckets over microseconds, after HdrHistogram: 1 µs resolution below 32 µs, then 32
 * buckets per power of two (at most ~3% relative error), up to 2^31 µs (~36 minutes; longer values
 * land in the last bucket). Recording is a few arithmetic operations and one array increment, and two
 * histograms subtract, so a window's percentiles come from the difference of two cumulative copies.
 */
const SUB_BITS = 5;
const SUB = 1 << SUB_BITS;
/** Exponents SUB_BITS..30 each get SUB buckets, after the SUB linear ones. */
const BUCKETS = SUB + (31 - SUB_BITS) * SUB;

/** Percentiles of a set of durations, in milliseconds. All zero when `count` is 0. */
export interface LatencySummary {
  /** How many durations were recorded. */
  readonly count: number;
  /** Their mean. */
  readonly meanMs: number;
  /** The median. */
  readonly p50Ms: number;
  /** The 90th percentile. */
  readonly p90Ms: number;
  /** The 99th percentile. */
  readonly p99Ms: number;
  /** The longest. */
  readonly maxMs: number;
}

function bucketOf(micros: number): number {
  const v = micros < 0 ? 0 : micros >= 2 ** 31 ? 2 ** 31 - 1 : Math.floor(micros);
  if (v < SUB) return v;
  const exponent = 31 - Math.clz32(v);
  return SUB + (exponent - SUB_BITS) * SUB + ((v >>> (exponent - SUB_BITS)) - SUB);
}

/** The middle of a bucket's range, in microseconds: the value a percentile reports. */
function midpointOf(bucket: number): number {
  if (bucket < SUB) return bucket;
  const exponent = SUB_BITS + Math.floor((bucket - SUB) / SUB);
  const width = 2 ** (exponent - SUB_BITS);
  const low = (SUB + ((bucket - SUB) % SUB)) * width;
  return low + (width - 1) / 2;
}

export class Histogram {
  /** Recordings per bucket. */
  readonly counts = new Float64Array(BUCKETS);
  count = 0;
  /** Sum of the recorded values in milliseconds, for the mean. */
  sumMs = 0;
  /** The largest recorded value, exactly (buckets only bound it). */
  maxMs = 0;

  record(ms: number): void {
    this.counts[bucketOf(ms * 1000)]++;
    this.count++;
    this.sumMs += ms;
    if (ms > this.maxMs) this.maxMs = ms;
  }

  reset(): void {
    this.counts.fill(0);
    this.count = 0;
    this.sumMs = 0;
    this.maxMs = 0;
  }

  copy(): Histogram {
    const h = new Histogram();
    h.counts.set(this.counts);
    h.count = this.count;
    h.sumMs = this.sumMs;
    h.maxMs = this.maxMs;
    return h;
  }

  /** The recordings made since `earlier`, a copy of this histogram taken before. Its max is bucket-precise. */
  since(earlier: Histogram): Histogram {
    const h = new Histogram();
    let top = -1;
    for (let i = 0; i < BUCKETS; i++) {
      const n = this.counts[i] - earlier.counts[i];
      h.counts[i] = n;
      if (n > 0) top = i;
    }
    h.count = this.count - earlier.count;
    h.sumMs = this.sumMs - earlier.sumMs;
    h.maxMs = top < 0 ? 0 : Math.min(this.maxMs, midpointOf(top) / 1000);
    return h;
  }

  /** The value at or below which `p` percent of the recordings lie, in milliseconds. */
  percentileMs(p: number): number {
    if (this.count === 0) return 0;
    const rank = Math.max(1, Math.ceil((p / 100) * this.count));
    let seen = 0;
    for (let i = 0; i < BUCKETS; i++) {
      seen += this.counts[i];
      if (seen >= rank) return Math.min(midpointOf(i) / 1000, this.maxMs);
    }
    return this.maxMs;
  }

  summary(): LatencySummary {
    return {
      count: this.count,
      meanMs: this.count === 0 ? 0 : this.sumMs / this.count,
      p50Ms: this.percentileMs(50),
      p90Ms: this.percentileMs(90),
      p99Ms: this.percentileMs(99),
      maxMs: this.maxMs,
    };
  }
}
