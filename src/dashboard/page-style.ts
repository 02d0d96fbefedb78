/**
 * The page's style sheet: a light theme, a card per dispatcher in a grid that takes the window's width
 * (one dispatcher spans it), charts that resize with it, and keys that wrap rather than being cut.
 * A state's colour comes from its `data-state` (see client/state.ts); orange and red mean something is
 * wrong, and the page's legend says what.
 */
export const PAGE_STYLE = `
:root {
  --bg: #f4f5f7; --card: #fff; --ink: #1d2330; --muted: #6b7280; --line: #e2e5ea; --track: #eceef2;
  --ok: #2f9e44; --run: #1971c2; --idle: #868e96; --warn: #e8890c; --bad: #d63031; --meter: #5c7cfa;
  font: 13px/1.4 system-ui, -apple-system, "Segoe UI", Roboto, "DejaVu Sans", sans-serif;
  color: var(--ink); background: var(--bg);
}
* { box-sizing: border-box; }
body { margin: 0; }
header { display: flex; gap: 16px; align-items: baseline; padding: 10px 20px; background: #1d2330; color: #fff; }
header h1 { font-size: 17px; margin: 0; font-weight: 600; }
header .muted { color: #aab1bd; }
.status::before { content: "\\25CF  "; color: #aab1bd; }
.status.live::before { color: #51cf66; }
.status.down::before { color: #ff6b6b; }
main { padding: 16px 20px; }
table { border-collapse: collapse; width: 100%; }
th, td { text-align: left; padding: 3px 8px; border-bottom: 1px solid var(--line); white-space: nowrap; }
th { font-weight: 600; color: var(--muted); font-size: 12px; }
.num { text-align: right; font-variant-numeric: tabular-nums; }
.wrap { white-space: normal; overflow-wrap: anywhere; }
caption { text-align: left; font-weight: 600; padding: 4px 0; }
.overview { background: var(--card); border: 1px solid var(--line); border-radius: 6px; margin-bottom: 8px; }
.overview a { color: inherit; }
.overview .mini { width: 120px; }
.state { font-weight: 600; }
.state[data-state="flowing"] { color: var(--ok); }
.state[data-state="running"] { color: var(--run); }
.state[data-state="idle"] { color: var(--idle); }
.state[data-state="not-settling"] { color: var(--warn); }
.state[data-state="held"] { color: var(--bad); }
.fault { color: var(--bad); font-weight: 600; }
.legend { list-style: none; margin: 0 0 16px; padding: 0 2px; display: grid; grid-template-columns: repeat(auto-fill, minmax(min(100%, 400px), 1fr)); gap: 2px 24px; color: var(--muted); font-size: 12px; }
.legend b { color: var(--ink); font-weight: 600; }
.legend .swatch { width: 10px; height: 10px; border-radius: 50%; vertical-align: -1px; margin-right: 5px; }
.swatch.state[data-state="flowing"] { background: var(--ok); }
.swatch.state[data-state="running"] { background: var(--run); }
.swatch.state[data-state="idle"] { background: var(--idle); }
.swatch.state[data-state="not-settling"] { background: var(--warn); }
.swatch.state[data-state="held"] { background: var(--bad); }
.swatch.fault { background: var(--bad); }
.dispatchers { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 620px), 1fr)); gap: 16px; }
.dispatcher { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; min-width: 0; }
.dispatcher h2 { font-size: 15px; margin: 0 0 8px; display: flex; flex-wrap: wrap; gap: 0 12px; align-items: baseline; }
.dispatcher h2 .name { overflow-wrap: anywhere; min-width: 0; }
.dispatcher h2 .state { font-size: 13px; overflow-wrap: anywhere; min-width: 0; }
.banner { background: #fdecea; color: #a61e1e; border: 1px solid #f3b7b5; border-radius: 4px; padding: 6px 10px; margin-bottom: 10px; overflow-wrap: anywhere; }
.banner code, .key { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.top { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 280px), 1fr)); gap: 8px 24px; margin-bottom: 12px; }
.gauge-label { display: flex; justify-content: space-between; margin-bottom: 4px; }
.gauge-track { position: relative; height: 16px; background: var(--track); border-radius: 8px; }
.gauge-fill { height: 100%; border-radius: 8px; background: var(--ok); transition: width .3s; }
.gauge-fill[data-state="running"] { background: var(--run); }
.gauge-fill[data-state="idle"] { background: var(--idle); }
.gauge-fill[data-state="not-settling"] { background: var(--warn); }
.gauge-fill[data-state="held"] { background: var(--bad); }
.gauge-mark { position: absolute; top: -4px; bottom: -4px; width: 2px; background: #1d2330; }
.gauge-note { color: var(--muted); font-size: 12px; margin-top: 4px; }
.facts { display: grid; grid-template-columns: repeat(auto-fill, minmax(200px, 1fr)); gap: 1px 24px; margin: 0; align-content: start; }
.facts div { display: flex; justify-content: space-between; gap: 12px; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
.charts { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 280px), 1fr)); gap: 12px 24px; margin-bottom: 12px; }
figure { margin: 0; min-width: 0; }
figcaption { display: flex; flex-wrap: wrap; gap: 2px 10px; align-items: baseline; margin-bottom: 2px; }
figcaption b { font-weight: 600; margin-right: auto; }
.swatch { display: inline-block; width: 10px; height: 3px; vertical-align: middle; margin-right: 3px; }
.plot { position: relative; height: clamp(110px, 14vw, 220px); border-left: 1px solid var(--line); border-bottom: 1px solid var(--line); }
.plot svg { position: absolute; inset: 0; width: 100%; height: 100%; overflow: visible; }
.plot .y { position: absolute; left: 3px; font-size: 11px; color: var(--muted); }
.span { font-size: 11px; color: var(--muted); text-align: right; }
.tables { display: grid; grid-template-columns: repeat(auto-fit, minmax(min(100%, 320px), 1fr)); gap: 12px 24px; align-items: start; }
.tables table { table-layout: fixed; }
.tables td { white-space: normal; }
.key { overflow-wrap: anywhere; }
.hot-keys .backlog { width: 68px; }
.hot-keys .parked { width: 60px; }
.hot-keys .share { width: 30%; }
.lanes .lane { width: 44px; }
.lanes .count { width: 60px; }
.meter { display: flex; align-items: center; gap: 6px; }
.meter-track { flex: 1; min-width: 40px; height: 8px; border-radius: 4px; background: var(--track); overflow: hidden; }
.meter-fill { height: 100%; border-radius: 4px; background: var(--meter); }
.meter-value { flex: none; width: 40px; text-align: right; font-variant-numeric: tabular-nums; font-size: 12px; }
.empty { color: var(--muted); font-style: italic; }
.last-error { margin: -4px 0 12px; color: var(--muted); overflow-wrap: anywhere; }
.last-error b { color: var(--ink); font-weight: 600; }
.last-error .error-text { color: var(--bad); font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 12px; }
.transport { margin-top: 12px; }
.transport .wrap { width: 100%; }
`;
