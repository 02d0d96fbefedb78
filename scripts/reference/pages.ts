import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { renderMetricsPage } from './metrics-page';
import { ROOT, renderOptionsPage } from './options-page';

/** The generated reference pages: where each is written, and what renders it. */
export const PAGES: Readonly<Record<string, () => string>> = {
  'docs/reference/options.md': renderOptionsPage,
  'docs/reference/metrics.md': renderMetricsPage,
};

// `npm run reference` writes them.
if (require.main === module) {
  for (const [page, render] of Object.entries(PAGES)) {
    mkdirSync(dirname(join(ROOT, page)), { recursive: true });
    writeFileSync(join(ROOT, page), render());
  }
}
