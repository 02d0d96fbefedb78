/// <reference lib="dom" />
import type { ErrorShown } from '../frame';
import { el, setText } from './dom';
import { clock } from './format';

const NONE = 'last error: none';

/** The last message settled as failed or dead-lettered: its error's text, its key and source, when. */
export class LastError {
  readonly element = el('div', { class: 'last-error' }, NONE);
  private shown: ErrorShown | null = null;

  update(error: ErrorShown | null): void {
    if (error === null) {
      setText(this.element, NONE);
      return;
    }
    // Rebuilt only when another error came: the text stays selectable between updates.
    if (this.shown !== null && this.shown.time === error.time && this.shown.text === error.text) return;
    this.shown = error;
    this.element.dataset.time = String(error.time);
    const key =
      error.key === null
        ? [' (its key selector failed)']
        : [', key ', el('span', { class: 'key' }, error.key)];
    this.element.replaceChildren(
      el('b', {}, 'Last error'),
      ` (${error.outcome}) at ${clock(error.time)}`,
      ...key,
      error.source === null ? '' : `, ${error.source}`,
      el('div', { class: 'error-text' }, error.text),
    );
  }
}
