import { type ClosableReceiver, keyedDispatch } from 'keyed-dispatch';
import { lastValueFrom, toArray } from 'rxjs';
import { deferred } from './waits';

/**
 * Fills a window of 8 with handlers that wait, calls `close()` while they run, then lets them finish.
 * Resolves with the ids handled (in the order they finished) and the promise `close()` returned.
 */
export async function closeWhileRunning<M>(
  receiver: ClosableReceiver<M>,
  key: (message: M) => string,
  id: (message: M) => string | number,
): Promise<{ handled: Array<string | number>; closed: Promise<void> }> {
  const window = 8;
  const windowFull = deferred();
  const release = deferred();
  let admitted = 0;
  const output = lastValueFrom(
    receiver.pipe(
      keyedDispatch({
        maxInFlight: window,
        key: (m: M) => {
          if (++admitted === window) windowFull.resolve();
          return key(m);
        },
        handle: async (m: M) => {
          await release.promise;
          return id(m);
        },
      }),
      toArray(),
    ),
  );
  await windowFull.promise;
  const closed = receiver.close();
  release.resolve();
  await closed;
  return { handled: await output, closed };
}
