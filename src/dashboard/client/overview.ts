/// <reference lib="dom" />
import type { DispatcherFrame } from '../frame';
import { el, setText } from './dom';
import { count, ms } from './format';
import { stateOf } from './state';
import { WindowGauge } from './window-gauge';

/** One row per dispatcher, linking to its card: with many dispatchers, where to look first. */
export class OverviewRow {
  readonly element: HTMLTableRowElement;
  private readonly gauge = new WindowGauge(true);
  private readonly cells: Record<'inFlight' | 'settled' | 'failed' | 'p99' | 'live' | 'state', HTMLElement>;

  constructor(name: string, id: string) {
    this.cells = {
      inFlight: el('td', { class: 'num' }, '–'),
      settled: el('td', { class: 'num' }, '–'),
      failed: el('td', { class: 'num' }, '–'),
      p99: el('td', { class: 'num' }, '–'),
      live: el('td', { class: 'num' }, '–'),
      state: el('td', { class: 'state wrap' }, 'waiting for data'),
    };
    const c = this.cells;
    this.element = el(
      'tr',
      { 'data-name': name },
      el('td', { class: 'wrap' }, el('a', { href: `#${id}` }, name)),
      el('td', {}, this.gauge.element),
      c.inFlight,
      c.settled,
      c.failed,
      c.p99,
      c.live,
      c.state,
    );
  }

  update(frame: DispatcherFrame): void {
    this.gauge.update(frame);
    setText(this.cells.inFlight, `${count(frame.inFlight)} / ${count(frame.maxInFlight)}`);
    setText(this.cells.settled, count(frame.settledPerSecond));
    const failed = count(frame.failedPerSecond);
    setText(this.cells.failed, failed);
    this.cells.failed.classList.toggle('fault', failed !== '0');
    setText(this.cells.p99, frame.timed === 0 ? '–' : ms(frame.p99Ms));
    setText(this.cells.live, count(frame.liveMailboxes));
    const state = stateOf(frame);
    setText(this.cells.state, state.text);
    this.cells.state.dataset.state = state.name;
  }
}
