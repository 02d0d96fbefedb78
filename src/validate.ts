/**
 * Validation shared by every options bag of the library: each error names the owner, the option, the
 * value and its type (`keyedDispatch: expected \`maxInFlight\` to be an integer >= 1, got 0.5 (number)`).
 */

/** Throws unless `options` is an object, naming its owner: every options bag is checked this way first. */
export function optionsObject(owner: string, options: unknown): void {
  if (options === null || typeof options !== 'object') {
    throw new TypeError(`${owner}: expected an options object, got ${describe(options)}`);
  }
}

/** Validates an optional integer option with a lower bound, naming the option, the value and its type. */
export function integerOption(
  owner: string,
  name: string,
  value: unknown,
  fallback: number,
  min: number,
): number {
  if (value === undefined) return fallback;
  if (typeof value !== 'number' || !Number.isInteger(value) || value < min) {
    throw new TypeError(`${owner}: expected \`${name}\` to be an integer >= ${min}, got ${describe(value)}`);
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
