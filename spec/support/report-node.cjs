// Preloaded through NODE_OPTIONS by a spec: appends the version of the Node that runs an example to the
// file REPORT_NODE_TO names. npm and scripts run on Node too; only a process started on a file of
// examples/ reports.
const { appendFileSync } = require('node:fs');
const { sep } = require('node:path');

if ((process.argv[1] ?? '').includes(`${sep}examples${sep}`)) {
  appendFileSync(process.env.REPORT_NODE_TO, `${process.version}\n`);
}
