import {
  ClosableReceiver,
  DispatchMetrics,
  DispatchRuntime,
  dispatchComponent,
  fromIterable,
  KeyedExecutor,
  keyedDispatch,
  ThreadExecutor,
} from 'keyed-dispatch';
import { serveDashboard } from 'keyed-dispatch/dashboard';
import { lastValueFrom, toArray } from 'rxjs';
import { laneKinds, type Msg, type Ran } from '../lanes/lane-kinds';
import { ListSession } from '../receivers/list-session';

describe.each(laneKinds)('an executor of %s declared with `await using`', (_name, kind) => {
  it('runs its dispatchers in the block and is closed when the block ends', async () => {
    let seen: KeyedExecutor | ThreadExecutor | undefined;
    {
      await using executor = kind.threads
        ? new ThreadExecutor({ workers: 1 })
        : new KeyedExecutor({ lanes: 1 });
      seen = executor;
      const ran = await lastValueFrom(
        fromIterable<Msg>([{ key: 'a', n: 1 }]).pipe(
          keyedDispatch<Msg, string, Ran>({ executor, key: (m) => m.key, handle: kind.handler('echo') }),
          toArray(),
        ),
      );
      expect(ran.map((r) => r.n)).toEqual([1]);
      expect(executor.closed).toBe(false);
    }
    expect(seen.closed).toBe(true);
  });
});

describe('a closable receiver declared with `await using`', () => {
  it('is closed when the block ends: its subscription completes and its session is closed once', async () => {
    const sessions: ListSession[] = [];
    let output: Promise<string[]> | undefined;
    {
      await using receiver = new ClosableReceiver<string>((sink) => {
        const session = new ListSession(sink);
        sessions.push(session);
        return session;
      }, 1_000);
      output = lastValueFrom(
        receiver.pipe(keyedDispatch({ key: (m: string) => m, handle: async (m: string) => m }), toArray()),
      );
      sessions[0]!.push('a1');
    }
    expect(await output).toEqual(['a1']);
    expect(sessions[0]!.calls.filter((c) => c === 'close')).toEqual(['close']);
  });
});

describe('a runtime declared with `await using`', () => {
  it('is stopped gracefully when the block ends, its executor closed with it', async () => {
    const handled: string[] = [];
    const executor = new KeyedExecutor({ lanes: 1 });
    let seen: DispatchRuntime | undefined;
    {
      await using runtime = new DispatchRuntime({
        executor,
        components: [
          dispatchComponent({
            name: 'letters',
            source: fromIterable(['a', 'b']),
            dispatch: { key: (m: string) => m, handle: async (m: string) => void handled.push(m) },
          }),
        ],
      }).start();
      seen = runtime;
      expect(runtime.state).toBe('running');
    }
    expect(seen.state).toBe('stopped');
    expect(executor.closed).toBe(true);
  });
});

describe('a dashboard declared with `await using`', () => {
  it('serves in the block and has closed its server when the block ends', async () => {
    let url = '';
    {
      await using dashboard = await serveDashboard({ sources: new DispatchMetrics(), port: 0 });
      url = dashboard.url;
      expect((await fetch(`${url.split('?')[0]}metrics`)).status).toBe(200);
    }
    await expect(fetch(url)).rejects.toThrow();
  });
});
