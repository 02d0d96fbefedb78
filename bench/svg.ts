/** A dependency-free SVG chart writer for the benchmark results: grouped bars, nothing more. */

export interface Series {
  readonly name: string;
  readonly values: readonly number[];
}

export interface Chart {
  readonly title: string;
  /** Label under each group of bars. */
  readonly categories: readonly string[];
  readonly series: readonly Series[];
  readonly yLabel: string;
}

const COLORS = ['#4e79a7', '#f28e2b', '#e15759', '#76b7b2', '#59a14f', '#edc948', '#b07aa1', '#9c755f'];
const W = 760;
const H = 380;
const PAD = { left: 72, right: 16, top: 40, bottom: 70 };

const esc = (s: string) => s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');

/** A round upper bound and tick step for the y axis. */
function axis(max: number): { top: number; step: number } {
  if (max <= 0) return { top: 1, step: 0.25 };
  const magnitude = 10 ** Math.floor(Math.log10(max));
  for (const m of [1, 2, 2.5, 5, 10]) {
    const step = (m * magnitude) / 4;
    if (step * 4 >= max) return { top: step * 4, step };
  }
  return { top: max, step: max / 4 };
}

function short(v: number): string {
  if (v >= 1e6) return `${+(v / 1e6).toFixed(2)}M`;
  if (v >= 1e3) return `${+(v / 1e3).toFixed(1)}k`;
  return `${+v.toFixed(2)}`;
}

function frame(chart: Chart, top: number, step: number, body: string[]): string {
  const plotH = H - PAD.top - PAD.bottom;
  // The legend: in as many columns (3, 2 or 1) as leave room for each name (about 7 px a character);
  // rows beyond two make the chart taller.
  const fits = (columns: number) =>
    chart.series.every((s, i) => PAD.left + (i % columns) * (690 / columns) + 14 + 7 * s.name.length <= W);
  const columns = [3, 2].find(fits) ?? 1;
  const columnW = 690 / columns;
  const height = H + Math.max(0, Math.ceil(chart.series.length / columns) - 2) * 14;
  const out = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${W}" height="${height}" viewBox="0 0 ${W} ${height}" font-family="sans-serif" font-size="12">`,
    `<title>${esc(chart.title)}</title>`,
    `<rect width="${W}" height="${height}" fill="white"/>`,
    `<text x="${W / 2}" y="22" text-anchor="middle" font-size="15" font-weight="bold">${esc(chart.title)}</text>`,
  ];
  for (let v = 0; v <= top + step / 2; v += step) {
    const y = PAD.top + plotH - (v / top) * plotH;
    out.push(`<line x1="${PAD.left}" x2="${W - PAD.right}" y1="${y}" y2="${y}" stroke="#ddd"/>`);
    out.push(`<text x="${PAD.left - 6}" y="${y + 4}" text-anchor="end">${short(v)}</text>`);
  }
  out.push(
    `<text transform="translate(16 ${PAD.top + plotH / 2}) rotate(-90)" text-anchor="middle">${esc(chart.yLabel)}</text>`,
  );
  out.push(...body);
  chart.series.forEach((s, i) => {
    const x = PAD.left + (i % columns) * columnW;
    const y = H - 30 + Math.floor(i / columns) * 14;
    out.push(`<rect x="${x}" y="${y - 9}" width="10" height="10" fill="${COLORS[i % COLORS.length]}"/>`);
    out.push(`<text x="${x + 14}" y="${y}">${esc(s.name)}</text>`);
  });
  out.push('</svg>');
  return out.join('\n');
}

/** Grouped bars: one group per category, one bar per series. */
export function barChart(chart: Chart): string {
  const { top, step } = axis(Math.max(...chart.series.flatMap((s) => s.values)));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const groupW = plotW / chart.categories.length;
  const barW = (groupW * 0.8) / chart.series.length;
  const body: string[] = [];
  chart.categories.forEach((c, g) => {
    const gx = PAD.left + g * groupW + groupW * 0.1;
    chart.series.forEach((s, i) => {
      const v = s.values[g] ?? 0;
      const h = (v / top) * plotH;
      const x = gx + i * barW;
      body.push(
        `<rect x="${x.toFixed(1)}" y="${(PAD.top + plotH - h).toFixed(1)}" width="${(barW - 2).toFixed(1)}" height="${h.toFixed(1)}" fill="${COLORS[i % COLORS.length]}"><title>${esc(s.name)}: ${short(v)}</title></rect>`,
      );
    });
    body.push(
      `<text x="${(gx + groupW * 0.4).toFixed(1)}" y="${PAD.top + plotH + 16}" text-anchor="middle">${esc(String(c))}</text>`,
    );
  });
  return frame(chart, top, step, body);
}
