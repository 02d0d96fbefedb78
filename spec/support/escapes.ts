/**
 * Records the library's process warnings (`KeyedDispatchWarning`, their text) instead of printing them.
 * What escapes to the process fails the spec by itself: Jest fails the running test on an unhandled
 * rejection or an uncaught exception. `escaped` collects what reaches the spec file's own `process`
 * object (Jest gives each file a copy, which the real process does not call), so it stays empty unless
 * code emits on that copy; it is kept as a second check. `restore()` puts the runner's listeners back.
 */
export function recordEscapes() {
  const escaped: unknown[] = [];
  const warnings: string[] = [];
  const savedRejection = process.listeners('unhandledRejection');
  const savedException = process.listeners('uncaughtException');
  process.removeAllListeners('unhandledRejection');
  process.removeAllListeners('uncaughtException');
  const onEscape = (err: unknown): void => {
    escaped.push(err);
  };
  const emitWarning = process.emitWarning;
  process.emitWarning = ((warning: string | Error, options?: { type?: string }) => {
    if (options?.type === 'KeyedDispatchWarning') warnings.push(String(warning));
    else emitWarning.call(process, warning, options as never);
  }) as typeof process.emitWarning;
  process.on('unhandledRejection', onEscape);
  process.on('uncaughtException', onEscape);
  return {
    escaped,
    warnings,
    restore(): void {
      process.emitWarning = emitWarning;
      process.off('unhandledRejection', onEscape);
      process.off('uncaughtException', onEscape);
      for (const listener of savedRejection) process.on('unhandledRejection', listener);
      for (const listener of savedException) process.on('uncaughtException', listener);
    },
  };
}

/** Lets timers and promise callbacks due now run: where an escaped failure would show. */
export function aFewTurns(ms = 20): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
