import type Redis from 'ioredis';
import { defaultFailurePolicy } from '../default-failure-policy';
import type { ReceiverSink, SettledListener, Settlement } from '../receiver';
import { ClosableReceiver } from '../receivers/closable-receiver';
import { type FailedAction, failedActionOption } from '../receivers/failed-action';
import { LagPoll } from '../receivers/lag-poll';
import { PullSession } from '../receivers/pull-session';
import {
  type ResolvedTransportHealth,
  TRANSPORT_HEALTH_OPTIONS,
  type TransportFault,
  type TransportHealthOptions,
  type TransportOperation,
  transportHealthOptions,
} from '../transport-fault';
import type { TransportLag } from '../transport-lag';
import { describe, durationOption, functionOption, optionsObject } from '../validate';
import { type RedisStreamMessage, toMessage } from './message';
import type { RedisClient } from './redis-client';
import { watchUnanswered } from './unanswered-watch';

/** Options of `fromRedisStreams`. Invalid values throw a `TypeError` naming the option. */
export interface RedisStreamsOptions extends TransportHealthOptions {
  /**
   * The connection for commands: group creation, `XACK`, `XAUTOCLAIM`, `XPENDING`. The receiver reads
   * on its own `redis.duplicate()` (blocking reads would stall acknowledgements) and never closes this one.
   */
  redis: RedisClient;
  /** The streams this consumer reads (for a partitioned layout: `StreamPartitions.assigned(...)`). Non-empty. */
  streams: readonly string[];
  /** The consumer group. Created on each stream (with `MKSTREAM`, from the first entry) when missing. */
  group: string;
  /** This consumer's name within the group; unique per live consumer, stable across restarts. */
  consumerName: string;
  /**
   * How long one wait of the broker for new entries lasts (a blocking read) before claims are checked
   * again. Integer ≥ 1 ms. Default 1000.
   */
  maxWaitMs?: number;
  /**
   * Pending entries idle at least this long (delivered to a consumer that has not acknowledged them:
   * dead, or left pending after a failure) are claimed with `XAUTOCLAIM` and delivered again. Must
   * exceed the longest handler time, or a live consumer's entry is handled twice. Integer ≥ 0 ms. Default 30000.
   */
  claimMinIdleMs?: number;
  /** How often claims are attempted. Integer ≥ 1 ms. Default 5000. */
  claimIntervalMs?: number;
  /** How long `close()` waits for delivered entries to settle (their `XACK` answered). Integer ≥ 0 ms. Default 30000. */
  closeTimeoutMs?: number;
  /**
   * How often the receiver asks Redis for the group's lag on each stream (`XINFO GROUPS`, on the command
   * connection), which the dispatcher's stats show as `transportLag`: the figures there are at most this
   * old. Integer ≥ 1 ms. Default 5000.
   */
  lagIntervalMs?: number;
  /**
   * How long a command of the receiver (`XREADGROUP`, `XACK`, `XAUTOCLAIM`, `XPENDING`, …) may go
   * unanswered — beyond a blocking read's own `maxWaitMs` — before it counts as a transport failure,
   * reported then and again every `commandTimeoutMs` while the answer is missing: how a Redis that
   * stopped answering without closing its connections (hung, or cut off by a partition without a
   * reset) shows. The command is not abandoned: a late answer is still used, so nothing it read is lost.
   * Integer ≥ 1 ms. Default 5000.
   */
  commandTimeoutMs?: number;
  /**
   * What a `failed` settlement does — a handler failed and nothing dealt with it (no failure policy, or
   * one without a `deadLetter` gave up); see `FailedAction`: `'redeliver'` leaves the entry pending, to
   * be claimed and delivered again after `claimMinIdleMs` (out of order with its key's later entries,
   * and again each time it fails: Redis has no delivery limit); `'ack'` acknowledges it, so it is never
   * delivered again. A `dead-lettered` entry is always acknowledged. Default `'redeliver'`.
   */
  onFailed?: FailedAction;
  /** Told each message's outcome, after its acknowledgement has been confirmed when it was acknowledged. */
  onSettled?: SettledListener<RedisStreamMessage>;
  /**
   * Told each failure the receiver survives and retries: a failed connection attempt of its reading
   * connection (`'connection'`), a failed `XREADGROUP`, `XREAD`, `XAUTOCLAIM` or `XPENDING`
   * (`'fetch'`), a failed `XACK` (`'commit'`, sent again until Redis answers), and any of them still
   * unanswered after `commandTimeoutMs`. A throw from it is ignored. Default: none (the failures are
   * still counted in `DispatchStats`).
   */
  onTransportError?: (fault: TransportFault) => void;
  /**
   * How long Redis may keep failing, with no command answered in between, before the receiver gives up
   * and errors the output with a `TransportUnreachableError`. Integer ≥ 1 ms. Default 60,000.
   */
  maxUnreachableMs?: number;
}

interface ResolvedOptions {
  redis: Redis;
  streams: readonly string[];
  group: string;
  consumerName: string;
  maxWaitMs: number;
  claimMinIdleMs: number;
  claimIntervalMs: number;
  closeTimeoutMs: number;
  lagIntervalMs: number;
  commandTimeoutMs: number;
  onFailed: FailedAction;
  onSettled: SettledListener<RedisStreamMessage> | undefined;
  health: ResolvedTransportHealth;
}

/**
 * A consumer-group receiver over Redis Streams. It reads with `XREADGROUP` exactly as many entries as
 * the dispatcher's window has free, acknowledges each with `XACK` only after its handler completed (or
 * its dead letter took it), and claims entries other consumers left pending (`XAUTOCLAIM`). Before
 * reading new entries of a stream it recovers that stream's pending entries, so a consumer taking over a
 * dead one's streams keeps per-key order. Transport failures are retried and reported through
 * `onTransportError`. `close()` stops reading, lets delivered entries settle and completes.
 */
export function fromRedisStreams(options: RedisStreamsOptions): ClosableReceiver<RedisStreamMessage> {
  const resolved = resolveOptions(options);
  return new ClosableReceiver(
    (sink) => new RedisStreamsSession(resolved, sink),
    resolved.closeTimeoutMs,
    RECEIVER,
  );
}

function resolveOptions(options: RedisStreamsOptions): ResolvedOptions {
  const owner = 'fromRedisStreams';
  optionsObject(owner, options, [
    'redis',
    'streams',
    'group',
    'consumerName',
    'maxWaitMs',
    'claimMinIdleMs',
    'claimIntervalMs',
    'closeTimeoutMs',
    'lagIntervalMs',
    'commandTimeoutMs',
    'onFailed',
    'onSettled',
    ...TRANSPORT_HEALTH_OPTIONS,
  ] satisfies Array<keyof RedisStreamsOptions>);
  const redis = options.redis as Partial<RedisClient> | undefined;
  if (redis === null || typeof redis !== 'object' || typeof redis.duplicate !== 'function') {
    throw new TypeError(`${owner}: expected \`redis\` to be an ioredis client, got ${describe(redis)}`);
  }
  const streams = options.streams;
  if (
    !Array.isArray(streams) ||
    streams.length === 0 ||
    !streams.every((s) => typeof s === 'string' && s.length > 0)
  ) {
    throw new TypeError(
      `${owner}: expected \`streams\` to be a non-empty array of stream names, got ${describe(streams)}`,
    );
  }
  if (new Set(streams).size !== streams.length) {
    throw new TypeError(
      `${owner}: expected \`streams\` to name each stream once, got [${streams.join(', ')}]`,
    );
  }
  return {
    // Typed structurally in the options (ioredis is an optional peer); it is an ioredis client.
    redis: options.redis as unknown as Redis,
    streams: [...streams],
    group: nameOption(owner, 'group', options.group),
    consumerName: nameOption(owner, 'consumerName', options.consumerName),
    maxWaitMs: durationOption(owner, 'maxWaitMs', options.maxWaitMs, 1000, 1),
    claimMinIdleMs: durationOption(owner, 'claimMinIdleMs', options.claimMinIdleMs, 30_000, 0),
    claimIntervalMs: durationOption(owner, 'claimIntervalMs', options.claimIntervalMs, 5000, 1),
    closeTimeoutMs: durationOption(owner, 'closeTimeoutMs', options.closeTimeoutMs, 30_000, 0),
    lagIntervalMs: durationOption(owner, 'lagIntervalMs', options.lagIntervalMs, 5000, 1),
    commandTimeoutMs: durationOption(owner, 'commandTimeoutMs', options.commandTimeoutMs, 5000, 1),
    onFailed: failedActionOption(owner, options.onFailed, ['redeliver', 'ack']),
    onSettled:
      options.onSettled === undefined ? undefined : functionOption(owner, 'onSettled', options.onSettled),
    health: transportHealthOptions(owner, options),
  };
}

function nameOption(owner: string, name: string, value: unknown): string {
  if (typeof value !== 'string' || value.length === 0) {
    throw new TypeError(`${owner}: expected \`${name}\` to be a non-empty string, got ${describe(value)}`);
  }
  return value;
}

/** One stream's reading state. */
interface StreamState {
  readonly name: string;
  /**
   * False until the stream's pending entries (left by an earlier or dead consumer) are all claimed:
   * new entries are read only after older ones were delivered, which keeps per-key order.
   */
  live: boolean;
  /** Where the next `XAUTOCLAIM` scan continues (`0-0`: from the start). */
  claimCursor: string;
  /** The newest entry id seen: a blocking wait watches for entries after it. */
  lastSeen: string;
  /**
   * Delivered entries of this stream waiting outside the dispatcher's window (their key at its share).
   * While there are any, the stream is held: no new entry of it is read, so the others keep flowing.
   */
  parked: number;
}

/** How errors and faults name this receiver. */
const RECEIVER = 'fromRedisStreams()';

/** The most entries one command reads or claims; a window without limit (`Infinity`) reads batches of this. */
const MAX_READ = 10_000;

/** How long the receiver waits before it tries a failed command again. */
const RETRY_MS = 500;

/** How often the streams are read while one is held: a blocking read could not be woken on its release. */
const HELD_POLL_MS = 20;

type EntryReply = [id: string, fields: string[] | null];

/** One subscription: a single read loop (so deliveries never exceed demand) plus acknowledgements. */
class RedisStreamsSession extends PullSession<RedisStreamMessage> {
  /** A consumer that must keep running: with no \`failurePolicy\`, a failed message is retried in its key's mailbox. */
  readonly defaultFailurePolicy = defaultFailurePolicy<RedisStreamMessage>();

  /** `XACK`s sent and not yet answered: until answered, their entries still count as pending on the server. */
  private readonly acks = new Set<Promise<void>>();
  /** Ids delivered and not yet settled, by stream: a claim scan that meets one never delivers it twice. */
  private readonly held = new Map<string, Set<string>>();
  private readonly states: StreamState[];
  /** Blocking reads get their own connection, so acknowledgements never wait behind them. */
  private readonly reader: Redis;
  /** The groups exist and each stream's last delivered id is known. */
  private prepared = false;
  /** Round-robin start among live streams, so one busy stream cannot starve the others. */
  private nextStream = 0;
  private nextClaimAt = 0;
  /** The group's lag on each stream, asked every `lagIntervalMs`. */
  private readonly lag: LagPoll;

  constructor(
    private readonly options: ResolvedOptions,
    sink: ReceiverSink<RedisStreamMessage>,
  ) {
    super(sink, options.onSettled, { ...options.health, receiver: RECEIVER });
    this.states = options.streams.map((name) => ({
      name,
      live: false,
      claimCursor: '0-0',
      lastSeen: '0-0',
      parked: 0,
    }));
    this.reader = options.redis.duplicate();
    // Each failed attempt to reconnect; unlistened, ioredis would print every one of them.
    this.reader.on('error', (err: unknown) => this.transportFailed('connection', err));
    this.reader.on('ready', () => this.transportRecovered());
    this.lag = new LagPoll(() => this.readLag(), options.lagIntervalMs);
    this.lag.start();
    this.runLoop(() => this.readLoop());
  }

  transportLag(): readonly TransportLag[] {
    return this.lag.latest;
  }

  /**
   * The group's entries not yet delivered (`lag`) plus those pending, per stream. Where Redis cannot
   * count the undelivered ones (its `lag` is nil after entries were deleted), the pending ones alone.
   */
  private async readLag(): Promise<TransportLag[]> {
    const { redis, group } = this.options;
    const lags: TransportLag[] = [];
    for (const { name } of this.states) {
      const groups = (await redis.xinfo('GROUPS', name)) as unknown[][];
      const info = groups.map(pairs).find((g) => g.name === group);
      if (info === undefined) continue;
      lags.push({
        transport: 'redis',
        source: name,
        partition: null,
        consumer: group,
        lag: Number(info.lag ?? 0) + Number(info.pending ?? 0),
        committed: String(info['last-delivered-id']),
        at: Date.now(),
      });
    }
    return lags;
  }

  /** Where an entry came from, for errors about it: `stream 'orders' entry 1700000000000-0 in group 'billing'`. */
  describe(message: RedisStreamMessage): string {
    return `stream '${message.stream}' entry ${message.id} in group '${this.options.group}'`;
  }

  protected override acknowledge(message: RedisStreamMessage, outcome: Settlement): void | Promise<void> {
    this.heldOf(message.stream).delete(message.id);
    // Left pending: claimed and delivered again once idle for claimMinIdleMs.
    if (outcome === 'failed' && this.options.onFailed === 'redeliver') return;
    const acked: Promise<void> = this.xack(message).finally(() => {
      this.acks.delete(acked);
      this.wake();
    });
    this.acks.add(acked);
    return acked;
  }

  protected override stopFetching(): void {
    // Ends a blocking read at once; entries delivered and not settled stay pending for a claim.
    // Acknowledgements go on, on the command connection.
    this.reader.disconnect();
  }

  /** Everything settled before the end is acknowledged before the close resolves (up to `closeTimeoutMs`). */
  protected override async close(): Promise<void> {
    this.lag.stop();
    if (this.acks.size === 0) return;
    let timer: ReturnType<typeof setTimeout> | undefined;
    const timeout = new Promise<void>((resolve) => {
      timer = setTimeout(resolve, this.options.closeTimeoutMs);
    });
    try {
      await Promise.race([Promise.all(this.acks), timeout]);
    } finally {
      clearTimeout(timer);
    }
  }

  /** An entry of a hot key had to park: its stream is held until its parked entries enter the window. */
  override parked(message: RedisStreamMessage): void {
    const state = this.states.find((s) => s.name === message.stream);
    if (state !== undefined) state.parked++;
  }

  override unparked(message: RedisStreamMessage): void {
    const state = this.states.find((s) => s.name === message.stream);
    if (state !== undefined && --state.parked === 0) this.wake();
  }

  /**
   * `XACK`s an entry; after a transport failure, again until Redis answers, while the session lasts
   * (after its end, the entry stays pending and is delivered again).
   */
  private async xack(message: RedisStreamMessage): Promise<void> {
    const { redis, group } = this.options;
    for (;;) {
      try {
        await this.answered('commit', 'XACK', redis.xack(message.stream, group, message.id));
        return;
      } catch (err) {
        if (this.ended || !survivable(err, redis)) throw err;
        this.transportFailed('commit', err);
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
      }
    }
  }

  /** What may be read now: the demand, less entries whose acknowledgement the server has not yet seen. */
  private free(): number {
    return Math.min(this.demand - this.acks.size, MAX_READ);
  }

  /** Reads until intake stops; a transport failure is reported and the step tried again. */
  private async readLoop(): Promise<void> {
    while (!this.stopped) {
      try {
        await this.readStep();
      } catch (err) {
        if (this.stopped) return;
        if (!survivable(err, this.options.redis) || !survivable(err, this.reader)) throw err;
        this.transportFailed('fetch', err);
        await this.wait(RETRY_MS);
      }
    }
  }

  /** Prepares once, then claims when due, else reads new entries or waits for them. */
  private async readStep(): Promise<void> {
    if (!this.prepared) return this.prepare();
    if (this.free() <= 0) return this.wait();
    if (Date.now() >= this.nextClaimAt) {
      await this.claim();
      this.nextClaimAt = Date.now() + this.options.claimIntervalMs;
      return;
    }
    const live = this.states.filter((s) => s.live && s.parked === 0);
    const untilClaim = Math.max(1, this.nextClaimAt - Date.now());
    if (live.length === 0) await this.wait(untilClaim);
    else if (await this.readNew(live)) return;
    // A blocking read cannot be woken when a held stream is released: poll meanwhile instead.
    else if (live.length < this.states.filter((s) => s.live).length)
      await this.wait(Math.min(untilClaim, HELD_POLL_MS));
    else await this.waitForEntries(live, untilClaim);
  }

  /** Creates the group where missing and finds where each stream's new entries begin. */
  private async prepare(): Promise<void> {
    const { redis, group } = this.options;
    for (const state of this.states) {
      try {
        await this.answered('fetch', 'XGROUP', redis.xgroup('CREATE', state.name, group, '0', 'MKSTREAM'));
      } catch (err) {
        if (!String((err as Error)?.message).startsWith('BUSYGROUP')) throw err;
      }
      const groups = (await this.answered(
        'fetch',
        'XINFO',
        redis.xinfo('GROUPS', state.name),
      )) as unknown[][];
      for (const flat of groups) {
        const info = pairs(flat);
        if (info.name === group) state.lastSeen = String(info['last-delivered-id']);
      }
    }
    this.prepared = true;
  }

  /** Recovers streams not yet live; on live ones, claims one batch of entries left pending too long. */
  private async claim(): Promise<void> {
    for (const state of this.states) {
      if (this.stopped) return;
      if (state.live) await this.claimIdle(state, false);
      else await this.recover(state);
    }
  }

  /**
   * Claims the entries pending on a stream that this session does not hold, in id order, and makes the
   * stream live once the scan has been through all of them. A scan starts only when every such entry is
   * idle long enough (claiming some while an older one of the same key is still held elsewhere would
   * reorder that key); one that the window cut short goes on from where it stopped. Entries pending once
   * the scan is through were delivered here and failed since: they come back as on a live stream.
   */
  private async recover(state: StreamState): Promise<void> {
    if (state.claimCursor === '0-0') {
      const { redis, group, claimMinIdleMs } = this.options;
      const held = this.heldOf(state.name);
      const [pending] = (await this.answered('fetch', 'XPENDING', redis.xpending(state.name, group))) as [
        number,
      ];
      if (pending <= held.size) {
        state.live = true;
        return;
      }
      const idle = (await this.answered(
        'fetch',
        'XPENDING',
        redis.call('XPENDING', state.name, group, 'IDLE', claimMinIdleMs, '-', '+', pending),
      )) as Array<[string, string, number, number]>;
      if (idle.filter(([id]) => !held.has(id)).length < pending - held.size) return;
    }
    if (await this.claimIdle(state, true)) state.live = true;
  }

  /**
   * `XAUTOCLAIM`s idle entries up to the free window and delivers them: one batch, or on to the end of
   * the scan. True once a scan reached its end.
   */
  private async claimIdle(state: StreamState, wholeScan: boolean): Promise<boolean> {
    const { redis, group, consumerName, claimMinIdleMs } = this.options;
    const held = this.heldOf(state.name);
    do {
      if (this.stopped || this.free() <= 0) return false;
      const [cursor, entries] = (await this.answered(
        'fetch',
        'XAUTOCLAIM',
        redis.xautoclaim(
          state.name,
          group,
          consumerName,
          claimMinIdleMs,
          state.claimCursor,
          'COUNT',
          this.free(),
        ),
      )) as [string, EntryReply[], string[]];
      state.claimCursor = cursor;
      // Entries this session holds are being handled here: claiming them again changed nothing.
      const fresh = entries.filter((e): e is [string, string[]] => e[1] !== null && !held.has(e[0]));
      if (fresh.length > 0) this.deliverEntries(state, fresh, await this.deliveryCounts(state.name, fresh));
    } while (wholeScan && state.claimCursor !== '0-0');
    return state.claimCursor === '0-0';
  }

  /** Delivery counts of just-claimed entries (`XAUTOCLAIM` does not return them). */
  private async deliveryCounts(stream: string, entries: EntryReply[]): Promise<Map<string, number>> {
    const { redis, group, consumerName } = this.options;
    const first = entries[0]![0];
    const last = entries[entries.length - 1]![0];
    // Entries this consumer already holds may lie in the same id range.
    const count = entries.length + this.heldOf(stream).size;
    const rows = (await this.answered(
      'fetch',
      'XPENDING',
      redis.xpending(stream, group, first, last, count, consumerName),
    )) as Array<[string, string, number, number]>;
    return new Map(rows.map(([id, , , times]) => [id, Number(times)]));
  }

  /** Reads new entries of the live streams without blocking, up to the free window. True if any came. */
  private async readNew(live: StreamState[]): Promise<boolean> {
    const { group, consumerName } = this.options;
    const start = this.nextStream++ % live.length;
    let got = false;
    for (let i = 0; i < live.length && !this.stopped && this.free() > 0; i++) {
      const state = live[(start + i) % live.length]!;
      const reply = (await this.answered(
        'fetch',
        'XREADGROUP',
        this.reader.xreadgroup(
          'GROUP',
          group,
          consumerName,
          'COUNT',
          this.free(),
          'STREAMS',
          state.name,
          '>',
        ),
      )) as Array<[string, EntryReply[]]> | null;
      const entries = (reply?.[0]?.[1] ?? []).filter((e): e is [string, string[]] => e[1] !== null);
      if (entries.length === 0) continue;
      got = true;
      state.lastSeen = entries[entries.length - 1]![0];
      this.deliverEntries(state, entries, null);
    }
    return got;
  }

  /**
   * Blocks (on the reading connection) until a live stream has an entry after the last one seen, or
   * `timeoutMs` passes. It reads nothing for the group: the next `readNew` takes exactly what is free.
   */
  private async waitForEntries(live: StreamState[], timeoutMs: number): Promise<void> {
    const blockMs = Math.min(this.options.maxWaitMs, timeoutMs);
    const reply = (await this.answered(
      'fetch',
      'XREAD',
      this.reader.xread(
        'COUNT',
        1,
        'BLOCK',
        blockMs,
        'STREAMS',
        ...live.map((s) => s.name),
        ...live.map((s) => s.lastSeen),
      ),
      blockMs,
    )) as Array<[string, EntryReply[]]> | null;
    for (const [name, entries] of reply ?? []) {
      const state = live.find((s) => s.name === name);
      const newest = entries[entries.length - 1];
      if (state !== undefined && newest !== undefined) state.lastSeen = newest[0];
    }
  }

  /**
   * `reply`, an answer from Redis (Redis answering again ends an outage), reported as a failure of
   * `operation` while it is missing past `commandTimeoutMs` after `blockMs`, a blocking read's own wait.
   */
  private async answered<R>(
    operation: TransportOperation,
    command: string,
    reply: Promise<R>,
    blockMs = 0,
  ): Promise<R> {
    const { commandTimeoutMs } = this.options;
    const answer = await watchUnanswered(reply, blockMs + commandTimeoutMs, commandTimeoutMs, (waitedMs) => {
      // Once the session has ended there is nobody to tell, and a command may never be answered.
      if (this.ended) return false;
      this.transportFailed(
        operation,
        new Error(
          `${RECEIVER}: no answer from Redis to ${command} for ${waitedMs} ms (\`commandTimeoutMs\`: ` +
            `${commandTimeoutMs}${blockMs > 0 ? ` after a ${blockMs} ms blocking wait` : ''}): ` +
            'the server is hung or unreachable',
        ),
      );
      return true;
    });
    this.transportRecovered();
    return answer;
  }

  private deliverEntries(
    state: StreamState,
    entries: Array<[string, string[]]>,
    counts: Map<string, number> | null,
  ): void {
    const held = this.heldOf(state.name);
    for (const [id, fields] of entries) {
      // Held before the delivery, which may settle it at once.
      held.add(id);
      if (!this.deliver(toMessage(state.name, id, fields, counts?.get(id) ?? 1))) {
        // Intake stopped mid-batch: the rest stay pending under this consumer and are claimed later.
        held.delete(id);
        return;
      }
    }
  }

  private heldOf(stream: string): Set<string> {
    let ids = this.held.get(stream);
    if (ids === undefined) this.held.set(stream, (ids = new Set()));
    return ids;
  }
}

/**
 * Whether a failure of a command on `client` is worth trying again: the connection's (ioredis queues
 * commands while it reconnects and fails them after `maxRetriesPerRequest` attempts), or a server that
 * cannot answer for now. Not a command's own error, nor a client closed for good (by the application,
 * or by a `retryStrategy` that gave up).
 */
function survivable(err: unknown, client: Redis): boolean {
  if (client.status === 'end') return false;
  // By name: errors from another realm (a test sandbox) fail `instanceof`.
  if ((err as { name?: unknown } | null)?.name !== 'ReplyError') return true;
  return SERVER_BUSY.test(String((err as Error).message));
}

/** Replies of a server that cannot answer for now: loading its data, running a script, failing over. */
const SERVER_BUSY = /^(LOADING|BUSY|TRYAGAIN|MASTERDOWN|CLUSTERDOWN)\b/;

/** `['name', 'g', 'pending', 3]` → `{ name: 'g', pending: 3 }`. */
function pairs(flat: unknown[]): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (let i = 0; i + 1 < flat.length; i += 2) out[String(flat[i])] = flat[i + 1];
  return out;
}
