/// <reference lib="dom" />
import type { ChartPoint, DispatcherFrame } from '../frame';
import { el, setText } from './dom';
import { age, count, ms, percent } from './format';
import { LastError } from './last-error';
import { LineChart } from './line-chart';
import { Meter } from './meter';
import { stateOf } from './state';
import { TransportPanel } from './transport-panel';
import { WindowGauge } from './window-gauge';

/**
 * One dispatcher's card: name and state, stall banner, window gauge, facts, last error, charts, hot
 * keys, lanes and transport.
 */
export class DispatcherView {
  readonly element: HTMLElement;
  private readonly state = el('span', { class: 'state' });
  private readonly banner = el('div', { class: 'banner', role: 'alert', hidden: '' });
  private readonly gauge = new WindowGauge();
  private readonly facts = new Map<string, HTMLElement>();
  private readonly throughput: LineChart;
  private readonly latency: LineChart;
  private readonly hotKeys = el('tbody');
  private readonly lanes = el('tbody');
  private readonly lastError = new LastError();
  private readonly transport = new TransportPanel();

  constructor(
    name: string,
    id: string,
    historyMs: number,
    private readonly periodMs: number,
  ) {
    this.throughput = new LineChart(
      'Throughput /s',
      [
        { name: 'admitted', label: 'admitted', color: '#4c6ef5' },
        { name: 'settled', label: 'settled', color: '#2f9e44' },
        { name: 'failed', label: 'failed', color: '#e03131' },
      ],
      count,
      historyMs,
      periodMs,
      10,
    );
    this.latency = new LineChart(
      'Handler latency',
      [
        { name: 'p50', label: 'p50', color: '#1c7ed6' },
        { name: 'p99', label: 'p99', color: '#7048e8' },
      ],
      ms,
      historyMs,
      periodMs,
      1,
    );
    const facts = el('dl', { class: 'facts' });
    for (const [field, label] of [
      ['liveMailboxes', 'live keys (mailboxes)'],
      ['overflow', 'overflow (waiting outside)'],
      ['longTurns', 'long turns (max)'],
      ['admitted', 'admitted'],
      ['settled', 'settled'],
      ['failed', 'failed'],
      ['deadLettered', 'dead-lettered'],
      ['oldestUnfinished', 'oldest unfinished'],
      ['transportFaults', 'transport faults'],
    ]) {
      const value = el('dd', { 'data-field': field }, '–');
      this.facts.set(field, value);
      facts.append(el('div', {}, el('dt', {}, label), value));
    }
    this.element = el(
      'section',
      { class: 'dispatcher', id, 'data-name': name },
      el('h2', {}, el('span', { class: 'name' }, name), this.state),
      this.banner,
      el('div', { class: 'top' }, this.gauge.element, facts),
      this.lastError.element,
      el('div', { class: 'charts' }, this.throughput.element, this.latency.element),
      el(
        'div',
        { class: 'tables' },
        el(
          'table',
          { class: 'hot-keys' },
          el('caption', {}, 'Hot keys'),
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              el('th', {}, 'key'),
              el('th', { class: 'num backlog' }, 'backlog'),
              el('th', { class: 'num parked' }, 'parked'),
              el('th', { class: 'share' }, 'share of window'),
            ),
          ),
          this.hotKeys,
        ),
        el(
          'table',
          { class: 'lanes' },
          el('caption', {}, 'Lanes'),
          el(
            'thead',
            {},
            el(
              'tr',
              {},
              el('th', { class: 'lane' }, 'lane'),
              el('th', {}, 'busy'),
              el('th', { class: 'num count' }, 'ready'),
              el('th', { class: 'num count' }, 'pinned'),
            ),
          ),
          this.lanes,
        ),
      ),
      this.transport.element,
    );
  }

  update(frame: DispatcherFrame, points: readonly ChartPoint[]): void {
    const state = stateOf(frame);
    setText(this.state, state.text);
    this.state.dataset.state = state.name;
    this.showStall(frame);
    this.gauge.update(frame);
    const fact = (field: string, text: string) => setText(this.facts.get(field) as HTMLElement, text);
    fact('liveMailboxes', count(frame.liveMailboxes));
    fact('overflow', count(frame.overflow));
    fact(
      'longTurns',
      frame.longTurns.count === 0 ? '0' : `${count(frame.longTurns.count)} (${ms(frame.longTurns.maxMs)})`,
    );
    fact('admitted', count(frame.admitted));
    fact('settled', count(frame.settled));
    fact('failed', count(frame.failed));
    fact('deadLettered', count(frame.deadLettered));
    this.showOldest(frame);
    this.showTransportFaults(frame);
    this.lastError.update(frame.lastError);
    this.transport.update(frame);
    this.throughput.update(points.map((p) => ({ time: p[0], values: [p[1], p[2], p[3]] })));
    this.latency.update(points.map((p) => ({ time: p[0], values: [p[4], p[5]] })));
    this.showHotKeys(frame);
    this.showLanes(frame);
  }

  /**
   * How long the oldest message in flight has been unfinished: `≥` when it was already at the first
   * reading (it may be much older), `<` a period when each reading finds only messages newer than the last.
   */
  private showOldest(frame: DispatcherFrame): void {
    const value = this.facts.get('oldestUnfinished') as HTMLElement;
    const oldest = frame.oldestUnfinished;
    let text = '–';
    if (oldest?.atLeast) text = `≥ ${age(oldest.ageMs)}`;
    else if (oldest !== null) text = oldest.ageMs === 0 ? `< ${age(this.periodMs)}` : age(oldest.ageMs);
    setText(value, text);
    value.dataset.value = oldest === null ? '' : String(oldest.ageMs);
  }

  /** The faults' total, highlighted when there are any; each operation's count in the title. */
  private showTransportFaults(frame: DispatcherFrame): void {
    const value = this.facts.get('transportFaults') as HTMLElement;
    const counts = Object.entries(frame.transportFaults);
    const total = counts.reduce((sum, [, n]) => sum + n, 0);
    setText(value, count(total));
    value.classList.toggle('fault', total > 0);
    value.title = counts.map(([operation, n]) => `${operation} ${count(n)}`).join(', ');
  }

  private showStall(frame: DispatcherFrame): void {
    const held = frame.heldBy;
    this.banner.hidden = held === null;
    if (held === null) return;
    const holds =
      held.parked > 0
        ? `holds ${count(held.backlog)} unfinished messages, ${count(held.parked)} of them parked outside the window, filling the parking area (${count(frame.parked)} of ${count(frame.maxParked)})`
        : `holds ${count(held.backlog)} of the ${count(frame.inFlight)} messages in flight (window ${count(frame.maxInFlight)})`;
    this.banner.replaceChildren(
      el('b', {}, 'Intake held by one key: '),
      el('code', { class: 'stall-key' }, held.key),
      ` ${holds}; nothing more is taken in until they drain.`,
    );
  }

  /**
   * Each hot key's backlog, its parked messages, and its share of the window: the messages it holds
   * inside the window (at most its `maxPerKey`, so never past 100 %); the parked ones wait outside it.
   */
  private showHotKeys(frame: DispatcherFrame): void {
    const window = Math.max(1, frame.maxInFlight);
    const rows = frame.hotKeys.map((hot) => {
      const share = (hot.backlog - hot.parked) / window;
      return el(
        'tr',
        {},
        el('td', {}, el('span', { class: 'key' }, hot.key)),
        el('td', { class: 'num' }, count(hot.backlog)),
        el('td', { class: 'num' }, hot.parked > 0 ? count(hot.parked) : ''),
        el('td', {}, new Meter().update(share, percent(share)).element),
      );
    });
    if (rows.length === 0)
      rows.push(el('tr', {}, el('td', { class: 'empty', colspan: '4' }, 'no key has unfinished messages')));
    this.hotKeys.replaceChildren(...rows);
  }

  private showLanes(frame: DispatcherFrame): void {
    const rows = frame.lanes.map((lane) =>
      el(
        'tr',
        { 'data-lane': String(lane.index) },
        el('td', {}, String(lane.index)),
        el('td', {}, new Meter().update(lane.busyRatio, percent(lane.busyRatio)).element),
        el('td', { class: 'num' }, count(lane.ready)),
        el('td', { class: 'num' }, count(lane.pinned)),
      ),
    );
    if (rows.length === 0)
      rows.push(el('tr', {}, el('td', { class: 'empty', colspan: '4' }, 'measured in the worker threads')));
    this.lanes.replaceChildren(...rows);
  }
}
