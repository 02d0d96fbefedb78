/** Medians, ranges and per-round ratios: the arithmetic every scenario reports with. */

export function median(values: readonly number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

export function minMax(values: readonly number[]): [number, number] {
  return [Math.min(...values), Math.max(...values)];
}

/** Per-round ratios a[i] / b[i], over the rounds both ran. */
export function perRound(a: readonly number[], b: readonly number[]): number[] {
  const out: number[] = [];
  for (let i = 0; i < Math.min(a.length, b.length); i++) out.push(a[i] / b[i]);
  return out;
}

/** `1.23 M`, `456.0 k`: a rate for tables. */
export function rate(perSecond: number): string {
  if (perSecond >= 1e6) return `${(perSecond / 1e6).toFixed(2)} M`;
  if (perSecond >= 1e3) return `${(perSecond / 1e3).toFixed(1)} k`;
  return perSecond.toFixed(0);
}

/** A ratio for tables: two decimals below 10, whole above. */
export function times(x: number): string {
  if (!Number.isFinite(x)) return '∞';
  return `${x >= 10 ? x.toFixed(0) : x.toFixed(2)}×`;
}

/** `1.23× (1.05×–1.40×)`: the median of per-round ratios and their range; `—` when nothing ran. */
export function ratioCell(xs: readonly number[]): string {
  if (xs.length === 0) return '—';
  if (xs.length === 1) return `${times(xs[0])} (1 round)`;
  const [lo, hi] = minMax(xs);
  return lo === hi ? times(lo) : `${times(median(xs))} (${times(lo)}–${times(hi)})`;
}

/** A Markdown table; also readable on a terminal. */
export function table(
  header: readonly string[],
  rows: ReadonlyArray<ReadonlyArray<string | number>>,
): string {
  const lines = [`| ${header.join(' | ')} |`, `|${header.map(() => '---').join('|')}|`];
  for (const row of rows) lines.push(`| ${row.join(' | ')} |`);
  return lines.join('\n');
}

/** `12.3 %`: a share for tables. */
export function percent(x: number): string {
  return `${(x * 100).toFixed(1)} %`;
}
