import {
  asyncScheduler,
  isObservable,
  Observable,
  type Observer,
  type SchedulerLike,
  type Subscription,
} from 'rxjs';
import type { AsyncClosable } from '../async-dispose';
import { createDispatcher } from '../dispatch/create-dispatcher';
import { type DispatchCore, throwAll } from '../dispatch/dispatch-core';
import { type LaneBackend, lanesOfOption } from '../dispatch/lanes';
import { KeyedExecutor } from '../executor';
import { callUser } from '../internal/call-user';
import { warnCallbackFailed } from '../internal/warn';
import { type KeyedDispatchOptions, type ResolvedDispatchOptions, resolveDispatchOptions } from '../options';
import type { DispatchStats } from '../stats';
import type { ThreadExecutor } from '../threads/thread-executor';
import { describe, durationOption, optionsObject } from '../validate';
import { Intake } from './intake';

/** One dispatcher of a runtime: where its messages come from, how they are handled, where results go. */
export interface RuntimeComponent<T, K, R> {
  /** Names the component in reports and errors. */
  name: string;
  /** Its messages: a receiver (pulled, settled after handling) or any Observable. */
  source: Observable<T>;
  /** Its `keyedDispatch` options; the executor is the runtime's. */
  dispatch: Omit<KeyedDispatchOptions<T, K, R>, 'executor'>;
  /**
   * Receives what its handlers emit, and its error if it fails. Default: values are dropped; an error
   * ends the component `errored` (in the stop report) and is reported as a process warning
   * (`KeyedDispatchWarning`), while the other components keep running. A callback that throws or
   * rejects is reported the same way.
   */
  output?: Partial<Observer<R>>;
}

/** Declares a component with its types inferred (an array of components loses them). */
export function dispatchComponent<T, K, R>(component: RuntimeComponent<T, K, R>): RuntimeComponent<T, K, R> {
  return component;
}

/** A component of any message and result types (`never` included: a handler that emits nothing). */
export type AnyRuntimeComponent = RuntimeComponent<any, any, any> | RuntimeComponent<any, any, never>;

/** Options of `DispatchRuntime`. */
export interface DispatchRuntimeOptions {
  /** The dispatchers it runs, started together and stopped together. At least one. */
  components: readonly AnyRuntimeComponent[];
  /**
   * The lanes every component runs on: a `KeyedExecutor` for function handlers, a `ThreadExecutor` for
   * `threadHandler`s (every component must match it; a mismatch is rejected at construction). The
   * runtime owns it: it is closed once every component has stopped (unless it is a shared executor).
   * Default: a new `KeyedExecutor()`.
   */
  executor?: KeyedExecutor | ThreadExecutor;
  /** Times the stop's deadline and quiet period. Default `asyncScheduler`. */
  scheduler?: SchedulerLike;
}

/** Options of `stopGracefully`. */
export interface GracefulStopOptions {
  /** Deadline of the whole stop, in ms: what has not finished by then is cut and left for redelivery. Integer ≥ 0. Default 30,000. */
  timeoutMs?: number;
  /**
   * Intake stays open until no component has taken a message in for this long (ms, bounded by the
   * deadline), so a cyclic pipeline (command → event → saga → command) can settle before intake closes.
   * Integer ≥ 0. Default 0 (close intake at once).
   */
  quietPeriodMs?: number;
  /**
   * What is finished once intake is closed: `'all'` runs every admitted message, queued ones included;
   * `'running'` finishes only the handlers already running and leaves queued messages for redelivery.
   * Default `'all'`.
   */
  drain?: 'all' | 'running';
}

/** How one component ended, in a stop report. */
export interface ComponentStopReport {
  /** The component's name, as given to `dispatchComponent`. */
  readonly name: string;
  /**
   * `drained`: everything it had admitted finished; `completed`: its source had ended before the stop;
   * `errored`: it failed (see `error`); `cut`: the deadline or a forced stop cancelled what was left;
   * `not-started`: the runtime was stopped before it started.
   */
  readonly state: 'drained' | 'completed' | 'errored' | 'cut' | 'not-started';
  /** Messages whose handler completed (settled `done`) while stopping. */
  readonly drained: number;
  /** Messages settled `failed` while stopping (a failure policy gave up on them). */
  readonly failed: number;
  /**
   * Messages it received and never settled — queued, running when cut, or delivered after intake
   * closed. Nothing acknowledged them: a transport redelivers them.
   */
  readonly leftForRedelivery: readonly unknown[];
  /** The component's error, when `state` is `errored`. */
  readonly error?: unknown;
  /** Errors its source raised while stopping (a throwing or failing cancellation, a late error). */
  readonly sourceErrors: readonly unknown[];
}

/** What a stop did. */
export interface StopReport {
  /** `drained`: everything finished in time; `deadline`: the timeout cut some work; `forced`: `forceStop`. */
  readonly outcome: 'drained' | 'deadline' | 'forced';
  /** One report per component, in declaration order. */
  readonly components: readonly ComponentStopReport[];
}

/** Raised by `start()` on a runtime that has been stopped. */
export class DispatchRuntimeStoppedError extends Error {
  /** The error's name, for logs and `instanceof`-free checks. */
  override name = 'DispatchRuntimeStoppedError';
  constructor() {
    super('DispatchRuntime: cannot start a runtime that has been stopped; create a new one');
  }
}

/** Where a runtime is in its life: created, started, stopping, or stopped. */
export type RuntimeState = 'new' | 'running' | 'stopping' | 'stopped';

/**
 * Runs several dispatchers (commands, domain events, projections, sagas) on one executor, with one
 * lifecycle: `start()` subscribes every dispatcher before any receiver is asked for a message (a
 * readiness barrier, so a message published by one component is never missed by another that was
 * not subscribed yet); `stopGracefully()` closes intake, lets admitted messages finish within a
 * deadline, settles nothing that did not finish, then closes the executor; `forceStop()` cuts at once.
 */
export class DispatchRuntime implements AsyncClosable {
  /** The executor every component runs on; closed once every component has stopped (unless it is a shared one). */
  readonly executor: KeyedExecutor | ThreadExecutor;
  /** The executor's lanes. */
  readonly #lanes: LaneBackend;
  readonly #components: RunningComponent<any, any, any>[];
  readonly #scheduler: SchedulerLike;
  /** The one lifecycle state: a stop keeps its report, so a second stop gets the same one. */
  #state: Lifecycle = { tag: 'new' };

  constructor(options: DispatchRuntimeOptions) {
    optionsObject('DispatchRuntime', options, ['components', 'executor', 'scheduler'] satisfies Array<
      keyof DispatchRuntimeOptions
    >);
    const components = options.components;
    if (!Array.isArray(components) || components.length === 0) {
      throw new TypeError(
        `DispatchRuntime: expected \`components\` to be a non-empty array, got ${describe(components)}`,
      );
    }
    const executor = options.executor ?? new KeyedExecutor();
    this.executor = executor;
    this.#lanes = lanesOfOption('DispatchRuntime', executor);
    this.#scheduler = options.scheduler ?? asyncScheduler;
    const names = new Set<string>();
    this.#components = components.map((component, i) => {
      const name = component?.name;
      if (typeof name !== 'string' || name === '' || names.has(name)) {
        throw new TypeError(
          `DispatchRuntime: expected \`components[${i}].name\` to be a unique non-empty string, got ${describe(name)}`,
        );
      }
      names.add(name);
      return new RunningComponent(component as RuntimeComponent<any, any, any>, this.executor, i);
    });
  }

  /** `new`, `running`, `stopping` or `stopped`. */
  get state(): RuntimeState {
    return this.#state.tag;
  }

  /**
   * Each component's name with the `stats` object of its `dispatch` options (undefined when it has
   * none), in declaration order: how a dashboard finds the components it can show.
   */
  componentStats(): ReadonlyArray<{
    /** The component's name. */
    readonly name: string;
    /** The `stats` of its `dispatch` options. */
    readonly stats: DispatchStats | undefined;
  }> {
    return this.#components.map((c) => ({ name: c.name, stats: c.stats }));
  }

  /**
   * Subscribes every component, then opens their intake together. Calling it again while running does
   * nothing; after a stop it throws `DispatchRuntimeStoppedError`.
   */
  start(): this {
    if (this.#state.tag === 'running') return this;
    if (this.#state.tag !== 'new') throw new DispatchRuntimeStoppedError();
    this.#state = { tag: 'running' };
    for (const component of this.#components) component.subscribe();
    // The barrier: every receiver is subscribed; now all are asked for messages, in one admission batch.
    this.#lanes.loop.batchAdmissions();
    try {
      for (const component of this.#components) component.intake.open();
    } finally {
      this.#lanes.loop.flushAdmissions();
    }
    return this;
  }

  /**
   * Stops intake (after the quiet period), lets admitted messages finish until the deadline, cuts what
   * is left (never settled, so it is redelivered), waits for receivers' cancellation within the same
   * deadline, then closes the executor. Resolves with what was drained and what was left. A second
   * call returns the same promise; before `start()` it just closes the executor.
   */
  stopGracefully(options: GracefulStopOptions = {}): Promise<StopReport> {
    if ('report' in this.#state) return this.#state.report;
    optionsObject('stopGracefully', options, ['timeoutMs', 'quietPeriodMs', 'drain'] satisfies Array<
      keyof GracefulStopOptions
    >);
    const timeout = durationOption('stopGracefully', 'timeoutMs', options.timeoutMs, 30_000, 0);
    const quietPeriod = durationOption('stopGracefully', 'quietPeriodMs', options.quietPeriodMs, 0, 0);
    const drain = options.drain ?? 'all';
    if (drain !== 'all' && drain !== 'running') {
      throw new TypeError(
        `stopGracefully: expected \`drain\` to be 'all' or 'running', got ${describe(drain)}`,
      );
    }
    if (this.#state.tag === 'new') return this.#stopUnstarted();
    return this.#stop((interruption) => this.#drainAndClose(timeout, quietPeriod, drain, interruption));
  }

  /**
   * Stops now: every handler still running is cancelled and every unfinished message is left for
   * redelivery; receivers are cancelled without waiting for them; the executor is closed. Bounded
   * whatever handlers or receivers do. Takes over a graceful stop under way (which then resolves with
   * this report).
   */
  forceStop(): Promise<StopReport> {
    if (this.#state.tag === 'new') return this.#stopUnstarted();
    if (this.#state.tag === 'stopping') this.#state.interrupt();
    if ('report' in this.#state) return this.#state.report;
    return this.#stop(() => {
      for (const component of this.#components) component.stopIntake('running');
      return this.#close('forced');
    });
  }

  /** `stopGracefully()` with its defaults, for `await using runtime = new DispatchRuntime(…).start()`. */
  async [Symbol.asyncDispose](): Promise<void> {
    await this.stopGracefully();
  }

  #stopUnstarted(): Promise<StopReport> {
    return this.#stop(() => {
      for (const component of this.#components) component.markNotStarted();
      return this.#close('drained');
    });
  }

  /** The one way into `stopping`, and out of it to `stopped` once `run` has written the report. */
  #stop(run: (interruption: Promise<void>) => Promise<StopReport>): Promise<StopReport> {
    let interrupt!: () => void;
    const interruption = new Promise<void>((resolve) => {
      interrupt = resolve;
    });
    let settle!: (outcome: Promise<StopReport>) => void;
    const report = new Promise<StopReport>((resolve) => {
      settle = resolve;
    });
    this.#state = { tag: 'stopping', report, interrupt };
    // Registered before any caller awaits `report`, so they see `stopped` (a failed close leaves `stopping`).
    report.then(
      () => {
        this.#state = { tag: 'stopped', report };
      },
      () => undefined,
    );
    settle(run(interruption));
    return report;
  }

  async #drainAndClose(
    timeout: number,
    quietPeriod: number,
    drain: 'all' | 'running',
    interruption: Promise<void>,
  ): Promise<StopReport> {
    const deadline = this.#scheduler.now() + timeout;
    let interrupted = false;
    void interruption.then(() => {
      interrupted = true;
    });
    const until = (promise: Promise<unknown>) =>
      this.#within(deadline, Promise.race([promise, interruption]));

    if (quietPeriod > 0) await this.#quiet(quietPeriod, deadline, interruption, () => interrupted);
    for (const component of this.#components) component.stopIntake(drain);
    const allEnded = this.#components.every((c) => c.hasEnded);
    const drained =
      !interrupted && (allEnded || (await until(Promise.all(this.#components.map((c) => c.ended)))));
    if (!drained || interrupted) return this.#close(interrupted ? 'forced' : 'deadline');
    // Receivers that close asynchronously get what is left of the deadline; then the executor closes.
    const closing = this.#components.filter((c) => c.intake.cancellation !== null);
    if (closing.length > 0 && !(await until(Promise.all(closing.map((c) => c.intake.cancellation))))) {
      for (const c of closing) c.intake.noteUnfinishedCancellation();
      return this.#close(interrupted ? 'forced' : 'deadline');
    }
    return this.#close(interrupted ? 'forced' : 'drained');
  }

  /** Waits until no component has taken a message in for `quietPeriod` ms, or the deadline. */
  async #quiet(
    quietPeriod: number,
    deadline: number,
    interruption: Promise<void>,
    interrupted: () => boolean,
  ): Promise<void> {
    let seen = this.#admitted();
    for (;;) {
      const wait = Math.min(quietPeriod, deadline - this.#scheduler.now());
      if (wait <= 0) return;
      await Promise.race([this.#sleep(wait).promise, interruption]);
      if (interrupted()) return;
      const now = this.#admitted();
      if (now === seen) return;
      seen = now;
    }
  }

  #admitted(): number {
    let n = 0;
    for (const component of this.#components) n += component.admitted;
    return n;
  }

  /**
   * Resolves true when `promise` settles before the deadline, false at the deadline. A deadline that has
   * passed still counts a promise settled already (a receiver that closed at once).
   */
  async #within(deadline: number, promise: Promise<unknown>): Promise<boolean> {
    const left = deadline - this.#scheduler.now();
    if (left <= 0) return settledAlready(promise);
    const timer = this.#sleep(left);
    try {
      return await Promise.race([promise.then(() => true), timer.promise.then(() => false)]);
    } finally {
      timer.cancel();
    }
  }

  #sleep(ms: number): { promise: Promise<void>; cancel: () => void } {
    let subscription: Subscription | undefined;
    const promise = new Promise<void>((resolve) => {
      subscription = this.#scheduler.schedule(() => resolve(), ms);
    });
    return { promise, cancel: () => subscription?.unsubscribe() };
  }

  /** Cuts what is still running, closes the executor and writes the report. */
  async #close(outcome: StopReport['outcome']): Promise<StopReport> {
    for (const component of this.#components) component.cut();
    // A shared executor outlives the runtime; one the application closed already needs nothing more.
    if (!this.#lanes.shared && !this.#lanes.closed) await this.executor.close();
    return { outcome, components: this.#components.map((c) => c.report()) };
  }
}

/** A runtime's lifecycle; `report` is the stop's, kept from the moment it starts. */
type Lifecycle =
  | { readonly tag: 'new' | 'running' }
  | { readonly tag: 'stopping'; readonly report: Promise<StopReport>; readonly interrupt: () => void }
  | { readonly tag: 'stopped'; readonly report: Promise<StopReport> };

/** A component inside a runtime: its intake, its dispatcher and the counters the stop report needs. */
class RunningComponent<T, K, R> {
  readonly intake: Intake<T>;
  /** Resolves when its output has completed or errored. */
  readonly ended: Promise<void>;
  /** Its output has completed or errored (known without waiting for `ended`). */
  hasEnded = false;
  private markEnded!: () => void;
  private readonly resolved: ResolvedDispatchOptions<T, K, R>;
  private dispatcher: DispatchCore<T, K, R> | null = null;
  private subscription: Subscription | null = null;
  private state: ComponentStopReport['state'] | 'running' | 'new' = 'new';
  private error: unknown = undefined;
  /** Settled counts when the stop began, to report what settled while stopping. */
  private settledAtStop = 0;
  private failedAtStop = 0;
  private readonly left: T[] = [];

  constructor(
    private readonly component: RuntimeComponent<T, K, R>,
    executor: KeyedExecutor | ThreadExecutor,
    index: number,
  ) {
    const owner = `DispatchRuntime: components[${index}] ('${component.name}')`;
    optionsObject(owner, component, ['name', 'source', 'dispatch', 'output'] satisfies Array<
      keyof RuntimeComponent<T, K, R>
    >);
    optionsObject(owner, component.dispatch);
    this.resolved = resolveDispatchOptions<T, K, R>({ ...component.dispatch, executor }, `${owner}.dispatch`);
    if (!isObservable(component.source)) {
      throw new TypeError(
        `${owner}: expected \`source\` to be an Observable or a receiver, got ${describe(component.source)}`,
      );
    }
    this.intake = new Intake(component.source);
    this.ended = new Promise<void>((resolve) => {
      this.markEnded = () => {
        this.hasEnded = true;
        resolve();
      };
    });
  }

  get admitted(): number {
    return this.dispatcher?.snapshot().admitted ?? 0;
  }

  get name(): string {
    return this.component.name;
  }

  get stats(): DispatchStats | undefined {
    return this.resolved.stats;
  }

  subscribe(): void {
    this.state = 'running';
    const output = this.component.output;
    const dispatched = new Observable<R>((subscriber) => {
      const dispatcher = createDispatcher(this.resolved, subscriber);
      this.dispatcher = dispatcher;
      dispatcher.start(this.intake.source);
      return () => throwAll(dispatcher.teardown());
    });
    // The output's callbacks are user code: a throw or a rejection of one is reported, never rethrown
    // (it would end the process and every other component with it).
    const outputFailed = (err: unknown): void =>
      warnCallbackFailed(`DispatchRuntime component '${this.name}' output`, 'was reported', err);
    const next = output?.next?.bind(output);
    this.subscription = dispatched.subscribe({
      next:
        next === undefined ? undefined : (value) => callUser(next, value, undefined, undefined, outputFailed),
      error: (err) => {
        this.state = 'errored';
        this.error = err;
        this.markEnded();
        if (output?.error) callUser(output.error.bind(output), err, undefined, undefined, outputFailed);
        else {
          warnCallbackFailed(
            `DispatchRuntime component '${this.name}'`,
            'ended errored (its stop report and an `output.error` have the error); the others keep running',
            err,
          );
        }
      },
      complete: () => {
        if (this.state === 'running') this.state = 'completed';
        this.markEnded();
        if (output?.complete)
          callUser(output.complete.bind(output), undefined, undefined, undefined, outputFailed);
      },
    });
  }

  /** Closes intake; with `'running'`, queued messages are taken out and left for redelivery. */
  stopIntake(drain: 'all' | 'running'): void {
    const snapshot = this.dispatcher?.snapshot();
    this.settledAtStop = snapshot?.settled ?? 0;
    this.failedAtStop = snapshot?.failed ?? 0;
    if (this.state !== 'running') return;
    this.state = 'drained';
    const dispatcher = this.dispatcher as DispatchCore<T, K, R>;
    // Intake first: the room the discard frees must not be offered to the receiver again.
    this.intake.stop();
    if (drain === 'running') for (const m of dispatcher.discard(() => true)) this.left.push(m);
  }

  /** Cancels what is still running: its messages are left for redelivery. */
  cut(): void {
    const dispatcher = this.dispatcher;
    if (dispatcher !== null && !dispatcher.closed) {
      for (const m of dispatcher.unfinished()) this.left.push(m);
      this.state = 'cut';
    }
    try {
      this.subscription?.unsubscribe();
    } catch (err) {
      // A handler's teardown threw; the dispatcher is torn down all the same.
      this.intake.errors.push(err);
    }
  }

  markNotStarted(): void {
    this.state = 'not-started';
  }

  report(): ComponentStopReport {
    const snapshot = this.dispatcher?.snapshot();
    return {
      name: this.component.name,
      state: this.state as ComponentStopReport['state'],
      drained: (snapshot?.settled ?? 0) - this.settledAtStop,
      failed: (snapshot?.failed ?? 0) - this.failedAtStop,
      leftForRedelivery: [...this.left, ...this.intake.late],
      ...(this.state === 'errored' ? { error: this.error } : {}),
      sourceErrors: [...this.intake.errors],
    };
  }
}

/** Microtask turns within which a promise that has settled (or a race or `Promise.all` of such) reports it. */
const SETTLED_TURNS = 8;

/** Whether `promise` has settled by now: its callbacks run within a few microtask turns, no timer needed. */
async function settledAlready(promise: Promise<unknown>): Promise<boolean> {
  let settled = false;
  const mark = (): void => {
    settled = true;
  };
  promise.then(mark, mark);
  for (let turn = 0; turn < SETTLED_TURNS && !settled; turn++) await undefined;
  return settled;
}
