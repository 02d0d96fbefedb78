/// <reference lib="dom" />

import type { TransportLag } from '../../transport-lag';
import type { DispatcherFrame, TransportRow } from '../frame';
import { el } from './dom';
import { clock, count } from './format';

/** A row of the panel: a source's lag (a partition, a stream) or the receiver's faults; what a row lacks is null. */
interface PanelRow {
  readonly source: string;
  readonly lag: number | null;
  readonly committed: string | null;
  readonly faults: TransportRow['faults'] | null;
  readonly lastFault: TransportRow['lastFault'];
}

/** A column of the transport panel: its heading and each row's cell. */
interface Column {
  readonly label: string;
  readonly numeric?: boolean;
  /** Long text (an error) that wraps; other cells stay on one line. */
  readonly wraps?: boolean;
  readonly cell: (row: PanelRow) => string;
  /** Shown in the red of failures when true. */
  readonly fault?: (row: PanelRow) => boolean;
}

const faults = (operation: keyof TransportRow['faults']): Column => ({
  label: operation,
  numeric: true,
  cell: (row) => (row.faults === null ? '' : count(row.faults[operation])),
  fault: (row) => (row.faults?.[operation] ?? 0) > 0,
});

/** The panel's columns, in order: another figure a transport reports is one more entry. */
const COLUMNS: readonly Column[] = [
  { label: 'source', cell: (row) => row.source },
  { label: 'lag', numeric: true, cell: (row) => (row.lag === null ? '' : count(row.lag)) },
  { label: 'committed', numeric: true, cell: (row) => row.committed ?? '' },
  faults('fetch'),
  faults('commit'),
  faults('heartbeat'),
  faults('connection'),
  { label: 'last fault at', cell: (row) => (row.lastFault === null ? '' : clock(row.lastFault.time)) },
  { label: 'last fault', wraps: true, cell: (row) => row.lastFault?.text ?? '' },
];

/** `orders [3]`, `orders (workers)`: a source of messages as the panel names it. */
function lagRow(lag: TransportLag): PanelRow {
  const where = lag.partition === null ? '' : ` [${lag.partition}]`;
  const who = lag.consumer === null ? '' : ` (${lag.consumer})`;
  return {
    source: `${lag.source}${where}${who}`,
    lag: lag.lag,
    committed: lag.committed,
    faults: null,
    lastFault: null,
  };
}

/** The receiver's transport: a row per source it reports (lag, committed position), then its faults. */
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

  update(frame: DispatcherFrame): void {
    const rows: PanelRow[] = [
      ...frame.transportLag.map(lagRow),
      ...frame.transport.map((row) => ({ ...row, lag: null, committed: null })),
    ];
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
        el(
          'tr',
          {},
          el(
            'td',
            { class: 'empty', colspan: String(COLUMNS.length) },
            'no lag reported, no transport fault',
          ),
        ),
      );
    }
    this.body.replaceChildren(...shown);
  }
}
