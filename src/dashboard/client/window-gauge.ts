/// <reference lib="dom" />
import type { DispatcherFrame } from '../frame';
import { el, setText } from './dom';
import { count } from './format';
import { stateOf } from './state';

/**
 * In flight against the window, with the stall threshold marked (past the mark, intake waits for
 * messages to settle), coloured by the dispatcher's state: a full window that settles is green.
 */
export class WindowGauge {
  readonly element: HTMLElement;
  private readonly fill = el('div', { class: 'gauge-fill' });
  private readonly mark = el('div', { class: 'gauge-mark', title: 'stall threshold' });
  private readonly inFlight = el('span', { 'data-field': 'inFlight' });
  private readonly window = el('span', { 'data-field': 'maxInFlight' });
  private readonly note = el('div', { class: 'gauge-note' });

  constructor(compact = false) {
    const track = el('div', { class: 'gauge-track' }, this.fill, this.mark);
    this.element = compact
      ? el('div', { class: 'mini' }, track)
      : el(
          'div',
          { class: 'gauge' },
          el(
            'div',
            { class: 'gauge-label' },
            el('b', {}, 'In flight'),
            el('span', {}, this.inFlight, ' / ', this.window),
          ),
          track,
          this.note,
        );
  }

  update(frame: DispatcherFrame): void {
    const window = Math.max(1, frame.maxInFlight);
    const state = stateOf(frame).name;
    this.fill.style.width = `${Math.min(100, (frame.inFlight / window) * 100)}%`;
    this.fill.dataset.state = state;
    this.mark.style.left = `${(frame.stallThreshold / window) * 100}%`;
    setText(this.inFlight, count(frame.inFlight));
    setText(this.window, count(frame.maxInFlight));
    const atMark = frame.inFlight > frame.stallThreshold;
    setText(
      this.note,
      atMark && state === 'flowing'
        ? `past the mark (${count(frame.stallThreshold)}): intake waits for settles, normal under load`
        : `intake waits above ${count(frame.stallThreshold)} (the mark)`,
    );
  }
}
