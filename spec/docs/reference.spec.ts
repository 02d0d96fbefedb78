import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { splitDefault } from '../../scripts/reference/options-page';
import { PAGES } from '../../scripts/reference/pages';
import { DISPATCH_OPTIONS } from '../../src/options';
import { INSTRUMENTS } from '../../src/prometheus/instruments';

const ROOT = join(__dirname, '..', '..');
const read = (page: string) => readFileSync(join(ROOT, page), 'utf8');
const rendered = new Map(Object.entries(PAGES).map(([page, render]) => [page, render()]));

describe('the generated reference', () => {
  it.each([...rendered.keys()])('%s is what `npm run reference` generates now', (page) => {
    expect(read(page)).toBe(rendered.get(page));
  });

  it('lists each option keyedDispatch accepts, under the anchor the guides link to, with the default its comment states', () => {
    const page = rendered.get('docs/reference/options.md') as string;
    const section = page.split('\n## KeyedDispatchOptions\n')[1].split('\n## ')[0];
    const options = [...section.matchAll(/^\| `(\w+)` \|/gm)].map((row) => row[1]);
    expect(options).toEqual([...DISPATCH_OPTIONS]);
    expect(section).toMatch(/^\| `maxInFlight` \| `number` \| 256 \| Unfinished messages/m);
    expect(page).toContain('[KeyedDispatchOptions](#keyeddispatchoptions)');
  });

  it('lists every metric family each export publishes, by its OpenTelemetry and Prometheus names', () => {
    const page = rendered.get('docs/reference/metrics.md') as string;
    for (const instrument of INSTRUMENTS) expect(page).toContain(`\`keyed_dispatch.${instrument.name}\``);
    expect(page).toContain('`keyed_dispatch_messages_settled_total`');
    expect(page).toContain('`keyed_dispatch_handler_duration_seconds`');
  });

  it("takes a comment's default from its sentence that starts with Default, and keeps the rest as written", () => {
    expect(splitDefault('Port to bind. Integer ≥ 0. Default 0.5. Read back as `url`.')).toEqual({
      default: '0.5',
      meaning: 'Port to bind. Integer ≥ 0. Read back as `url`.',
    });
    expect(splitDefault('Default: none (counted anyway). Told each fault.')).toEqual({
      default: 'none (counted anyway)',
      meaning: 'Told each fault.',
    });
    expect(splitDefault('Says what it does, with no default.')).toEqual({
      default: '',
      meaning: 'Says what it does, with no default.',
    });
  });
});
