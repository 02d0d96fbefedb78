/// <reference lib="dom" />
import { el, setText } from './dom';

/** A horizontal bar on a track, with its value written beside it: a share read at a glance and exactly. */
export class Meter {
  readonly element: HTMLElement;
  private readonly fill = el('div', { class: 'meter-fill' });
  private readonly value = el('span', { class: 'meter-value' });

  constructor() {
    this.element = el('div', { class: 'meter' }, el('div', { class: 'meter-track' }, this.fill), this.value);
  }

  /** `ratio` from 0 to 1 (clamped) fills the track; `text` is written beside it. */
  update(ratio: number, text: string): this {
    this.fill.style.width = `${Math.min(100, Math.max(0, ratio * 100))}%`;
    setText(this.value, text);
    return this;
  }
}
