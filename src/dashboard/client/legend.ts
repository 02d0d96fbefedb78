/// <reference lib="dom" />
import { el } from './dom';
import { STATES } from './state';

/** What each colour on the page means: the states, then the red of a count that reports failures. */
export function legend(): HTMLElement {
  const entry = (swatch: HTMLElement, label: string, meaning: string) =>
    el('li', {}, swatch, el('b', {}, label), `: ${meaning}`);
  return el(
    'ul',
    { class: 'legend' },
    ...STATES.map((state) =>
      entry(el('span', { class: 'swatch state', 'data-state': state.name }), state.label, state.meaning),
    ),
    entry(
      el('span', { class: 'swatch fault' }),
      'red count',
      'failed messages per second, or transport faults the receiver survived.',
    ),
  );
}
