const whole = new Intl.NumberFormat('en-US', { maximumFractionDigits: 0 });

/** `12,345`: counts and rates. */
export function count(n: number): string {
  return whole.format(n);
}

/** `0.42 ms`, `12.3 ms`, `1.25 s`: durations. */
export function ms(n: number): string {
  if (n >= 1000) return `${(n / 1000).toFixed(2)} s`;
  return `${n.toFixed(n < 10 ? 2 : 1)} ms`;
}

/** `37 %`; `<1 %` for a share above 0 that rounds to 0. */
export function percent(ratio: number): string {
  const rounded = Math.round(ratio * 100);
  return rounded === 0 && ratio > 0 ? '<1 %' : `${rounded} %`;
}

/** The smallest round number (1, 1.5, 2, 2.5, 3, 4, 5, 6, 8 × 10^k) at or above `n`: a chart's top that reads well. */
export function niceCeiling(n: number): number {
  if (!(n > 0)) return 1;
  const magnitude = 10 ** Math.floor(Math.log10(n));
  for (const step of [1, 1.5, 2, 2.5, 3, 4, 5, 6, 8]) if (step * magnitude >= n) return step * magnitude;
  return 10 * magnitude;
}

/** `850 ms`, `12.3 s`, `4 min 12 s`, `2 h 05 min`: how long something has lasted. */
export function age(n: number): string {
  if (n < 1000) return `${Math.round(n)} ms`;
  if (n < 60_000) return `${(n / 1000).toFixed(1)} s`;
  const minutes = Math.floor(n / 60_000);
  if (minutes < 60) return `${minutes} min ${Math.floor((n % 60_000) / 1000)} s`;
  return `${Math.floor(minutes / 60)} h ${String(minutes % 60).padStart(2, '0')} min`;
}

/** `8:27:31 PM`: a moment (ms since the epoch), in the browser's time zone and language. */
export function clock(time: number): string {
  return new Date(time).toLocaleTimeString();
}
