/**
 * `Symbol.asyncDispose` for the declarations we ship: Node 22 and later have it at run time, but a
 * project compiled without TypeScript's `esnext.disposable` library (and without Node's types, which
 * declare it the same way) would not know the symbol.
 */
declare global {
  interface SymbolConstructor {
    readonly asyncDispose: unique symbol;
  }
}

/**
 * What a user closes (executors, closable receivers, the runtime, the dashboard): its
 * `Symbol.asyncDispose` closes it as its `close()` (the runtime: `stopGracefully()`) does, so
 * `await using` closes it at the end of the block.
 */
export interface AsyncClosable {
  /** Closes it as `close()` does (the runtime: `stopGracefully()`); resolves once it is closed. */
  [Symbol.asyncDispose](): Promise<void>;
}
