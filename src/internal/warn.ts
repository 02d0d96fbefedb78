import { errorTextOf } from './text-of';

/**
 * Reports the failure of a callback whose failure the library survives (a listener, a monitoring hook):
 * a process warning of type `KeyedDispatchWarning`, never a throw, so monitoring code cannot stop the
 * dispatching it watches. `consequence` says what follows (`is no longer called`).
 */
export function warnCallbackFailed(callback: string, consequence: string, error: unknown): void {
  process.emitWarning(`${callback} failed and ${consequence}: ${errorTextOf(error)}`, {
    type: 'KeyedDispatchWarning',
  });
}
