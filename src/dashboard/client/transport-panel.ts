/// <reference lib="dom" />
import type { TransportRow } from '../frame';
import { el } from './dom';
import { clock, count } from './format';

/** A column of the transport panel: its heading and each row's cell. */
interface Column {
  readonly label: string;
  readonly numeric?: boolean;
  /** Long text (an error) that wraps; other cells stay on one line. */
  readonly wraps?: boolean;
  readonly cell: (row: TransportRow) => string;
  /** Shown in the red of failures when true. */
  readonly fault?: (row: TransportRow) => boolean;
}

const faults = (operation: keyof TransportRow['faults']): Column => ({
  label: operation,
  numeric: true,
  cell: (row) => count(row.faults[operation]),
  fault: (row) => row.faults[operation] > 0,
});

/** The panel's columns, in order: a figure a transport reports per source (lag, committed position) is one more entry. */
const COLUMNS: readonly Column[] = [
  { label: 'source', cell: (row) => row.source },
  faults('fetch'),
  faults('commit'),
  faults('heartbeat'),
  faults('connection'),
  { label: 'last fault at', cell: (row) => (row.lastFault === null ? '' : clock(row.lastFault.time)) },
  { label: 'last fault', wraps: true, cell: (row) => row.lastFault?.text ?? '' },
];

/** The receiver's transport: a row per source it reports, with its faults by operation and the last one. */
export class TransportPanel {
  readonly element: HTMLTableElement;
  private readonly body = el('tbody');

  constructor() {
    const headings = COLUMNS.map((column) => el('th', column.numeric ? { class: 'num' } : {}, column.label));
    this.element = el(
      'table',
      { class: 'transport' },
      el('caption', {}, 'Transport'),
      el('thead', {}, el('tr', {}, ...headings)),
      this.body,
    );
  }

  update(rows: readonly TransportRow[]): void {
    const shown = rows.map((row) =>
      el(
        'tr',
        {},
        ...COLUMNS.map((column) => {
          const classes = [
            column.numeric ? 'num' : '',
            column.wraps ? 'wrap' : '',
            column.fault?.(row) ? 'fault' : '',
          ];
          return el('td', { class: classes.filter((c) => c !== '').join(' ') }, column.cell(row));
        }),
      ),
    );
    if (shown.length === 0) {
      shown.push(
        el('tr', {}, el('td', { class: 'empty', colspan: String(COLUMNS.length) }, 'no transport fault')),
      );
    }
    this.body.replaceChildren(...shown);
  }
}
