/**
 * Validation shared by every options bag of the library: each error names the owner, the option, the
 * value and its type (`keyedDispatch: expected \`maxInFlight\` to be an integer >= 1, got 0.5 (number)`).
 */

/**
 * Throws unless `options` is an object, naming its owner: every options bag is checked this way first.
 * Given the owner's option `names`, it also rejects any other key: a misspelt option (`maxInflight`)
 * would otherwise be ignored and its default taken without a word.
 */
export function optionsObject(owner: string, options: unknown, names?: readonly string[]): void {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${owner}: expected an options object, got ${describe(options)}`);
  }
  if (names === undefined) return;
  for (const name of Object.keys(options)) {
    if (!names.includes(name)) {
      throw new TypeError(
        `${owner}: unknown option \`${name}\`; its options are ${names.map((n) => `\`${n}\``).join(', ')}`,
      );
    }
  }
}

/**
 * Validates an optional integer option with a lower bound (and an upper one, when given), naming the
 * option, the value and its type.
 */
export function integerOption(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
  max = Number.POSITIVE_INFINITY,
  /** Where `max` comes from when another option sets it, so the error names that option too. */
  maxIs?: string,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
    const upTo = maxIs === undefined ? `${max}` : `${max} (${maxIs})`;
    const range = max === Number.POSITIVE_INFINITY ? `>= ${min}` : `from ${min} to ${upTo}`;
    throw new TypeError(`${owner}: expected \`${name}\` to be an integer ${range}, got ${describe(value)}`);
  }
  return value;
}

/**
 * The longest delay a Node timer honours (2^31 − 1 ms, about 24.8 days): a longer one fires after 1 ms.
 * Every duration option is bounded by it, so none can fire early.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** The most lanes an executor may have: more would only compete for the same cores (and memory). */
export const MAX_WORKERS = 1024;

/** Validates an optional duration in whole milliseconds, from `min` to `MAX_TIMER_MS`. */
export function durationOption(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
): number {
  return integerOption(owner, name, value, fallback, min, MAX_TIMER_MS);
}

/** Validates an optional boolean option: a string such as `'false'` read from the environment is refused. */
export function booleanOption(owner: string, name: string, value: unknown, fallback: boolean): boolean {
  if (value === undefined) return fallback;
  if (typeof value !== 'boolean') {
    throw new TypeError(`${owner}: expected \`${name}\` to be a boolean, got ${describe(value)}`);
  }
  return value;
}

export function functionOption<F>(owner: string, name: string, value: F): F {
  if (typeof value !== 'function') {
    throw new TypeError(`${owner}: expected \`${name}\` to be a function, got ${describe(value)}`);
  }
  return value;
}

/** `1.5 (number)`, `'x' (string)`, `null`: a value and its type, for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (value === undefined) return 'undefined';
  if (typeof value === 'string') return `'${value}' (string)`;
  if (typeof value === 'function') return 'a function';
  if (typeof value === 'object') return `${Array.isArray(value) ? 'an array' : 'an object'} (object)`;
  return `${String(value)} (${typeof value})`;
}
