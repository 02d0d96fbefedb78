import { PAGE_STYLE } from './page-style';

/**
 * The dashboard's page: a shell the script fills in from the event stream. Style and script are inline
 * (one request, nothing fetched from anywhere else) and carry the nonce the Content-Security-Policy
 * allows, so nothing else on the page could run.
 */
export function pageHtml(script: string, nonce: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>keyed-dispatch dashboard</title>
<style nonce="${nonce}">${PAGE_STYLE}</style>
</head>
<body>
<header>
<h1>keyed-dispatch</h1>
<span id="status" class="status">connecting…</span>
<span id="updated" class="muted"></span>
</header>
<main>
<table id="overview" class="overview">
<thead><tr><th>dispatcher</th><th>window</th><th class="num">in flight</th><th class="num">settled/s</th><th class="num">failed/s</th><th class="num">p99</th><th class="num">live keys</th><th>state</th></tr></thead>
<tbody></tbody>
</table>
<div id="legend"></div>
<div id="dispatchers" class="dispatchers"></div>
</main>
<script nonce="${nonce}">${inlineSafe(script)}</script>
</body>
</html>
`;
}

/** A script inside <script> ends at the first `</script`: the bundle's own text must not contain one. */
function inlineSafe(script: string): string {
  return script.replace(/<\/(script)/gi, '<\\/$1');
}

/** Only the page's own style and script run; it talks to its own server only. */
export function contentSecurityPolicy(nonce: string): string {
  return [
    "default-src 'none'",
    `script-src 'nonce-${nonce}'`,
    `style-src 'nonce-${nonce}'`,
    "connect-src 'self'",
    "img-src 'self' data:",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
}
