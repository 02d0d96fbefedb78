/** One stream entry as handlers get it from `fromRedisStreams`. */
export interface RedisStreamMessage {
  /** The entry id (`<ms>-<seq>`), unique within its stream. */
  readonly id: string;
  /** The stream it was read from. */
  readonly stream: string;
  /** The entry's `key` field (`''` when it has none). */
  readonly key: string;
  /** The entry's `data` field (`''` when it has none). */
  readonly data: string;
  /** Every field of the entry, for entries written with other field names. */
  readonly fields: Readonly<Record<string, string>>;
  /**
   * How many times the group has delivered this entry, this delivery included: 1 on a first read;
   * more after a consumer died or left it pending, and it was claimed again.
   */
  readonly deliveryCount: number;
}

/** Builds the message of an entry reply `[id, [field, value, ...]]`. */
export function toMessage(
  stream: string,
  id: string,
  flat: readonly string[],
  deliveryCount: number,
): RedisStreamMessage {
  const fields: Record<string, string> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) fields[flat[i] as string] = flat[i + 1] as string;
  return { id, stream, key: fields.key ?? '', data: fields.data ?? '', fields, deliveryCount };
}
