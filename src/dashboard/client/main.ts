/// <reference lib="dom" />
// The dashboard page: builds a card per dispatcher from the server's `hello`, then updates it with
// each `frame` of the event stream (one per dispatcher per period).
import { type ChartPoint, type DispatcherFrame, type Hello, pointOf } from '../frame';
import { DispatcherView } from './dispatcher-view';
import { setText } from './dom';
import { clock } from './format';
import { legend } from './legend';
import { OverviewRow } from './overview';

interface Shown {
  readonly view: DispatcherView;
  readonly row: OverviewRow;
  points: ChartPoint[];
}

const byId = (id: string) => document.getElementById(id) as HTMLElement;
const status = byId('status');
const updated = byId('updated');
const cards = byId('dispatchers');
const overview = byId('overview').querySelector('tbody') as HTMLElement;
const shown = new Map<string, Shown>();
byId('legend').append(legend());
let historyLength = 300;

function start(hello: Hello): void {
  historyLength = hello.historyLength;
  shown.clear();
  cards.replaceChildren();
  overview.replaceChildren();
  hello.names.forEach((name, i) => {
    const id = `d-${i}`;
    const entry: Shown = {
      view: new DispatcherView(name, id, hello.historyLength * hello.periodMs, hello.periodMs),
      row: new OverviewRow(name, id),
      points: [...(hello.history[name] ?? [])],
    };
    shown.set(name, entry);
    cards.append(entry.view.element);
    overview.append(entry.row.element);
  });
  for (const frame of hello.frames) show(frame, false);
}

function show(frame: DispatcherFrame, isNew: boolean): void {
  const entry = shown.get(frame.name);
  if (entry === undefined) return;
  if (isNew) {
    entry.points.push(pointOf(frame));
    if (entry.points.length > historyLength) entry.points.shift();
  }
  entry.view.update(frame, entry.points);
  entry.row.update(frame);
  setText(updated, `updated ${clock(frame.time)}`);
}

const token = new URLSearchParams(location.search).get('token');
const events = new EventSource(`./events${token === null ? '' : `?token=${encodeURIComponent(token)}`}`);
events.addEventListener('hello', (e) => start(JSON.parse((e as MessageEvent<string>).data) as Hello));
events.addEventListener('frame', (e) =>
  show(JSON.parse((e as MessageEvent<string>).data) as DispatcherFrame, true),
);
events.addEventListener('open', () => {
  setText(status, 'live');
  status.className = 'status live';
});
events.addEventListener('error', () => {
  // A refused stream (503 over `maxEventStreams`, 401, 421) is closed for good: the browser does not retry.
  const refused = events.readyState === EventSource.CLOSED;
  setText(
    status,
    refused ? 'refused by the server (too many pages open?): reload to try again' : 'disconnected, retrying…',
  );
  status.className = 'status down';
});
