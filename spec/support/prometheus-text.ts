/** A strict reader of the Prometheus text format (0.0.4), so specs check the format as well as the values. */

export interface ParsedSample {
  readonly name: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly value: number;
}

export interface ParsedFamily {
  readonly name: string;
  readonly help: string;
  readonly type: string;
  readonly samples: ParsedSample[];
}

const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(\{.*\})? (\S+)$/;
const LABEL = /([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\]|\\.)*)"(,|$)/y;

/** Families by name; throws on any line that is not well-formed or a sample outside its family. */
export function parsePrometheusText(text: string): Map<string, ParsedFamily> {
  const families = new Map<string, ParsedFamily>();
  let current: ParsedFamily | null = null;
  let help = '';
  for (const line of text.split('\n')) {
    if (line === '') continue;
    if (line.startsWith('# HELP ')) {
      help = line.slice(7).slice(line.slice(7).indexOf(' ') + 1);
      continue;
    }
    if (line.startsWith('# TYPE ')) {
      const [name, type] = line.slice(7).split(' ');
      current = { name, help, type, samples: [] };
      families.set(name, current);
      continue;
    }
    const match = SAMPLE.exec(line);
    if (match === null) throw new Error(`not a sample line: ${JSON.stringify(line)}`);
    const [, name, labelText, valueText] = match;
    const suffixes = current?.type === 'histogram' ? ['_bucket', '_sum', '_count'] : [''];
    if (current === null || !suffixes.some((s) => name === current?.name + s)) {
      throw new Error(`sample ${name} outside its family (${current?.name ?? 'none'})`);
    }
    const value = valueText === '+Inf' ? Number.POSITIVE_INFINITY : Number(valueText);
    if (Number.isNaN(value) && valueText !== 'NaN') throw new Error(`bad value in ${JSON.stringify(line)}`);
    current.samples.push({ name, labels: parseLabels(labelText ?? ''), value });
  }
  return families;
}

function parseLabels(text: string): Record<string, string> {
  const labels: Record<string, string> = {};
  if (text === '') return labels;
  const body = text.slice(1, -1);
  LABEL.lastIndex = 0;
  while (LABEL.lastIndex < body.length) {
    const start = LABEL.lastIndex;
    const match = LABEL.exec(body);
    if (match === null || match.index !== start) throw new Error(`bad labels: ${text}`);
    labels[match[1]] = match[2].replace(/\\(.)/g, (_, c: string) => (c === 'n' ? '\n' : c));
  }
  return labels;
}

/** The value of the one sample of `name` whose labels include `labels`; throws unless exactly one matches. */
export function sampleValue(
  families: Map<string, ParsedFamily>,
  name: string,
  labels: Record<string, string> = {},
): number {
  const family = families.get(name.replace(/_(bucket|sum|count)$/, '')) ?? families.get(name);
  const found = (family?.samples ?? []).filter(
    (s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v),
  );
  if (found.length !== 1) throw new Error(`${found.length} samples of ${name} ${JSON.stringify(labels)}`);
  return found[0].value;
}
