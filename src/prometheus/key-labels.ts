import { textOf } from '../internal/text-of';
import type { HotKey } from '../stats';

/**
 * The hot keys' backlogs by label value: each key as text (`textOf`, so a key with no text form has its
 * tag), and keys that read the same (`1` and `'1'`) summed into one, so that no two samples of an
 * export share their labels. Shared by the Prometheus and OpenTelemetry exports.
 */
export function backlogsByKeyText(hotKeys: readonly HotKey[]): Array<{ key: string; backlog: number }> {
  const byText = new Map<string, number>();
  for (const hot of hotKeys) {
    const text = textOf(hot.key);
    byText.set(text, (byText.get(text) ?? 0) + hot.backlog);
  }
  return [...byText].map(([key, backlog]) => ({ key, backlog }));
}
