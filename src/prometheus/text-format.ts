/**
 * The Prometheus text exposition format (version 0.0.4), for the dashboard's `GET /metrics`: label
 * values and help texts are escaped, so a key holding quotes, backslashes or line breaks cannot break
 * a line or forge a sample.
 */

export const CONTENT_TYPE = 'text/plain; version=0.0.4; charset=utf-8';

export type Labels = Readonly<Record<string, string>>;

/** One line of a family: `suffix` extends the family's name (`_bucket`, `_sum`, `_count`). */
export interface Sample {
  readonly labels: Labels;
  readonly value: number;
  readonly suffix?: string;
}

export interface Family {
  readonly name: string;
  readonly help: string;
  readonly type: 'gauge' | 'counter' | 'histogram';
  readonly samples: readonly Sample[];
}

export function formatFamilies(families: readonly Family[]): string {
  let text = '';
  for (const family of families) {
    text += `# HELP ${family.name} ${escapeHelp(family.help)}\n# TYPE ${family.name} ${family.type}\n`;
    for (const sample of family.samples) {
      text += `${family.name}${sample.suffix ?? ''}${formatLabels(sample.labels)} ${formatValue(sample.value)}\n`;
    }
  }
  return text;
}

function formatLabels(labels: Labels): string {
  const pairs = Object.entries(labels).map(([name, value]) => `${name}="${escapeLabelValue(value)}"`);
  return pairs.length === 0 ? '' : `{${pairs.join(',')}}`;
}

export function escapeLabelValue(value: string): string {
  return value.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n');
}

function escapeHelp(help: string): string {
  return help.replace(/\\/g, '\\\\').replace(/\n/g, '\\n');
}

export function formatValue(value: number): string {
  if (Number.isNaN(value)) return 'NaN';
  if (value === Number.POSITIVE_INFINITY) return '+Inf';
  if (value === Number.NEGATIVE_INFINITY) return '-Inf';
  return String(value);
}
