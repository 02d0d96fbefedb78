/** The page's style sheet: a light theme, a card per dispatcher in a grid that reflows with the window. */
export const PAGE_STYLE = `
:root {
  --bg: #f4f5f7; --card: #fff; --ink: #1d2330; --muted: #6b7280; --line: #e2e5ea;
  --ok: #2f9e44; --warn: #e8890c; --bad: #d63031;
  --admitted: #4c6ef5; --settled: #2f9e44; --failed: #e03131; --p50: #1c7ed6; --p99: #f08c00;
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
caption { text-align: left; font-weight: 600; padding: 4px 0; }
.overview { background: var(--card); border: 1px solid var(--line); border-radius: 6px; margin-bottom: 16px; }
.overview a { color: inherit; }
.overview .mini { width: 120px; }
.state-ok { color: var(--ok); }
.state-full { color: var(--warn); font-weight: 600; }
.state-stalled { color: var(--bad); font-weight: 600; }
.dispatchers { display: grid; grid-template-columns: repeat(auto-fill, minmax(620px, 1fr)); gap: 16px; }
.dispatcher { background: var(--card); border: 1px solid var(--line); border-radius: 6px; padding: 12px 16px; min-width: 0; }
.dispatcher h2 { font-size: 15px; margin: 0 0 8px; overflow: hidden; text-overflow: ellipsis; white-space: nowrap; }
.banner { background: #fdecea; color: #a61e1e; border: 1px solid #f3b7b5; border-radius: 4px; padding: 6px 10px; margin-bottom: 10px; overflow-wrap: anywhere; }
.banner code, .key { font-family: ui-monospace, "DejaVu Sans Mono", monospace; }
.top { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 16px; margin-bottom: 10px; }
.gauge-label { display: flex; justify-content: space-between; margin-bottom: 4px; }
.gauge-track { position: relative; height: 16px; background: #eceef2; border-radius: 8px; }
.gauge-fill { height: 100%; border-radius: 8px; background: var(--ok); transition: width .3s; }
.gauge-fill.full { background: var(--warn); }
.gauge-fill.stalled { background: var(--bad); }
.gauge-mark { position: absolute; top: -4px; bottom: -4px; width: 2px; background: #1d2330; }
.gauge-note { color: var(--muted); font-size: 12px; margin-top: 4px; }
.facts { display: grid; grid-template-columns: auto auto; gap: 1px 12px; margin: 0; }
.facts dt { color: var(--muted); }
.facts dd { margin: 0; text-align: right; font-variant-numeric: tabular-nums; }
.facts dd.fault { color: var(--bad); font-weight: 600; }
.charts { display: grid; grid-template-columns: minmax(0, 1fr) minmax(0, 1fr); gap: 12px; margin-bottom: 10px; }
figure { margin: 0; min-width: 0; }
figcaption { display: flex; flex-wrap: wrap; gap: 2px 10px; align-items: baseline; margin-bottom: 2px; }
figcaption b { font-weight: 600; margin-right: auto; }
.swatch { display: inline-block; width: 10px; height: 3px; vertical-align: middle; margin-right: 3px; }
.plot { position: relative; height: 110px; border-left: 1px solid var(--line); border-bottom: 1px solid var(--line); }
.plot svg { position: absolute; inset: 0; width: 100%; height: 100%; overflow: visible; }
.plot .y { position: absolute; left: 3px; font-size: 11px; color: var(--muted); }
.span { font-size: 11px; color: var(--muted); text-align: right; }
.tables { display: grid; grid-template-columns: minmax(0, 3fr) minmax(0, 2fr); gap: 16px; align-items: start; }
.tables table { table-layout: fixed; }
.tables td { overflow: hidden; text-overflow: ellipsis; }
.key { display: block; overflow: hidden; text-overflow: ellipsis; }
.hot-keys .backlog { width: 64px; }
.hot-keys .share { width: 30%; }
.lanes .lane { width: 40px; }
.lanes .count { width: 56px; }
.bar { height: 8px; border-radius: 4px; background: var(--admitted); min-width: 1px; }
.bar.busy { background: var(--p99); }
.empty { color: var(--muted); font-style: italic; }
`;
