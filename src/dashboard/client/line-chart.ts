/// <reference lib="dom" />
import { el, setText, svgEl } from './dom';
import { niceCeiling } from './format';

export interface Series {
  readonly name: string;
  readonly label: string;
  readonly color: string;
}

/** A point: its time (ms since the epoch) and one value per series (null: nothing measured). */
export interface Point {
  readonly time: number;
  readonly values: ReadonlyArray<number | null>;
}

/** The plot's coordinate space; the SVG stretches it to the element's size. */
const W = 1000;
const H = 100;
/** The span shown grows with the data from this many periods to the history's length. */
const MIN_SPAN_PERIODS = 60;

/**
 * A small SVG line chart of recent values, newest at the right. The legend shows each series' latest
 * value drawn (also as `data-value`, which the browser spec reads). A point with nothing measured
 * (null: no handler timed in that period) is skipped, the line joining the values around it; only
 * missing points (no page was connected) break the lines. A value alone between breaks is a dot.
 */
export class LineChart {
  readonly element: HTMLElement;
  private readonly paths: SVGPathElement[];
  private readonly legend: HTMLElement[];
  private readonly top: HTMLElement;
  private readonly middle: HTMLElement;
  private readonly spanLabel: HTMLElement;
  private readonly svg: SVGSVGElement;

  constructor(
    title: string,
    private readonly series: readonly Series[],
    private readonly format: (n: number) => string,
    private readonly maxSpanMs: number,
    private readonly periodMs: number,
    /** The smallest top of the y axis, so that an idle chart does not magnify noise. */
    private readonly minTop: number,
  ) {
    this.legend = series.map((s) => el('span', { 'data-series': s.name, 'data-value': '0' }, ''));
    const caption = el('figcaption', {}, el('b', {}, title));
    series.forEach((s, i) => {
      const swatch = el('span', { class: 'swatch' });
      swatch.style.background = s.color;
      caption.append(el('span', {}, swatch, `${s.label} `, this.legend[i]));
    });
    const svg = svgEl('svg', { viewBox: `0 0 ${W} ${H}`, preserveAspectRatio: 'none' });
    this.svg = svg;
    for (const y of [0, H / 2]) {
      svg.append(
        svgEl('line', {
          x1: '0',
          x2: String(W),
          y1: String(y),
          y2: String(y),
          stroke: '#e2e5ea',
          'vector-effect': 'non-scaling-stroke',
        }),
      );
    }
    this.paths = series.map((s) => {
      const path = svgEl('path', {
        fill: 'none',
        stroke: s.color,
        'stroke-width': '1.5',
        // A lone value is a segment of no length: round caps make it a dot.
        'stroke-linecap': 'round',
        'vector-effect': 'non-scaling-stroke',
        'data-series': s.name,
        'data-points': '0',
      });
      svg.append(path);
      return path;
    });
    this.top = el('span', { class: 'y' });
    this.top.style.top = '0';
    this.middle = el('span', { class: 'y' });
    this.middle.style.top = '50%';
    this.spanLabel = el('div', { class: 'span' });
    this.element = el(
      'figure',
      { class: 'chart' },
      caption,
      el('div', { class: 'plot' }, svg, this.top, this.middle),
      this.spanLabel,
    );
  }

  update(points: readonly Point[]): void {
    const last = points[points.length - 1];
    if (last === undefined) return;
    const now = last.time;
    const span = Math.min(this.maxSpanMs, Math.max(MIN_SPAN_PERIODS * this.periodMs, now - points[0].time));
    const shown = points.filter((p) => now - p.time <= span);
    this.series.forEach((_, i) => {
      const value = latestValue(shown, i);
      setText(this.legend[i], value === null ? '–' : this.format(value));
      this.legend[i].dataset.value = value === null ? '' : String(value);
    });
    let max = 0;
    for (const p of shown) for (const v of p.values) if (v !== null && v > max) max = v;
    const top = niceCeiling(Math.max(max, this.minTop));
    this.svg.dataset.top = String(top);
    setText(this.top, this.format(top));
    setText(this.middle, this.format(top / 2));
    setText(this.spanLabel, `last ${Math.round(span / 1000)} s`);
    const x = (time: number) => (W * (1 - (now - time) / span)).toFixed(1);
    const y = (v: number) => (H * (1 - v / top)).toFixed(1);
    this.series.forEach((_, i) => {
      let d = '';
      let vertices: string[] = [];
      const endLine = () => {
        // A lone vertex is drawn as a segment to itself (a dot), not as a move that draws nothing.
        if (vertices.length === 1) vertices.push(vertices[0]);
        if (vertices.length > 0) d += `M${vertices.join('L')}`;
        vertices = [];
      };
      let previous = Number.NEGATIVE_INFINITY;
      for (const p of shown) {
        // Nothing was read while no page was connected: no line across that time.
        if (p.time - previous > 2.5 * this.periodMs) endLine();
        previous = p.time;
        const value = p.values[i];
        if (value !== null) vertices.push(`${x(p.time)} ${y(value)}`);
      }
      endLine();
      this.paths[i].setAttribute('d', d);
      this.paths[i].dataset.points = String(points.length);
    });
  }
}

/** The last value of series `i` in `points`, or null when none has one. */
function latestValue(points: readonly Point[], i: number): number | null {
  for (let j = points.length - 1; j >= 0; j--) {
    const value = points[j].values[i];
    if (value !== null) return value;
  }
  return null;
}
