/**
 * A hidden property under a registered symbol: what one copy of the library (its CommonJS or ESM build)
 * attaches to its objects, another copy loaded beside it finds. Not enumerable, so the public objects
 * show none of it. The key carries a protocol version, bumped when what copies share changes, so that
 * copies of different versions refuse each other's objects instead of half-working.
 */
export interface SharedSlot<V> {
  /** Attaches `value` to `owner`; a `replaceable` one may be attached again (a subclass replacing its parent's). */
  attach(owner: object, value: V, replaceable?: boolean): void;
  /** What `owner` carries, or undefined (also for anything that is not an object). */
  of(owner: unknown): V | undefined;
}

export function sharedSlot<V>(name: string): SharedSlot<V> {
  const key = Symbol.for(`keyed-dispatch.${name}@2`);
  return {
    attach(owner, value, replaceable = false) {
      Object.defineProperty(owner, key, { value, configurable: replaceable });
    },
    of(owner) {
      if (typeof owner !== 'object' || owner === null) return undefined;
      return (owner as { [key]?: V })[key];
    },
  };
}
