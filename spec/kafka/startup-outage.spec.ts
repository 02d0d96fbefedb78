import { DispatchStats, type TransportFault, TransportUnreachableError } from 'keyed-dispatch';
import { ADAPTERS, type ClientAdapter } from './adapters';
import { BROKER, unique, within } from './broker';
import { dispatchRecords, useEventTopics } from './events';
import { LateProxy } from './late-proxy';

jest.setTimeout(40_000);

const eventTopics = useEventTopics('startup-outage');

/** The bound of the member whose broker never answers. */
const GIVE_UP_MS = 3_000;
/** When the other member's broker starts answering: after several failed starts, well within its bound. */
const ANSWERS_AFTER_MS = 3_000;
/** The other member's bound. */
const PATIENT_MS = 20_000;
/** The longest a close may take while the start waits for the broker: far below the client's 30 s connect wait. */
const CLOSE_BOUND_MS = 10_000;
const RECORDS = 20;

/** A member started through `broker`, recording its faults, what it handles and when its output ended. */
function member(
  kind: ClientAdapter,
  broker: string,
  topic: string,
  maxUnreachableMs: number,
  quickRetries = true,
) {
  const faults: TransportFault[] = [];
  const stats = new DispatchStats();
  const handled = new Set<string>();
  const receiver = kind.receiver(
    unique('group'),
    [topic],
    { maxUnreachableMs, onTransportError: (fault) => faults.push(fault) },
    { broker, quickRetries },
  );
  const startedAt = Date.now();
  const state = { endedAfterMs: null as number | null, error: undefined as unknown };
  const output = dispatchRecords(
    receiver,
    async (m) => {
      handled.add(`${m.partition}:${m.offset}`);
    },
    { stats },
  ).then(
    () => {
      state.endedAfterMs = Date.now() - startedAt;
    },
    (error: unknown) => {
      state.endedAfterMs = Date.now() - startedAt;
      state.error = error;
    },
  );
  const counted = () => Object.values(stats.snapshot().transportFaults).reduce((a, b) => a + b, 0);
  return { faults, handled, receiver, output, state, counted };
}

describe.each(ADAPTERS)('Kafka on $name at start-up', (kind) => {
  it('a receiver started while the broker is unreachable counts and reports its faults, keeps trying, errors with TransportUnreachableError only past maxUnreachableMs, and with a longer bound starts once the broker answers and consumes every record', async () => {
    const topic = await eventTopics.topicWith(2, RECORDS, 4);
    const never = await LateProxy.reserve();
    const late = await LateProxy.reserve();
    const impatient = member(kind, never.address, topic, GIVE_UP_MS);
    const patient = member(kind, late.address, topic, PATIENT_MS);
    try {
      await new Promise((resolve) => setTimeout(resolve, ANSWERS_AFTER_MS));
      const faultsWhileUnreachable = patient.faults.length;
      await late.open(BROKER);
      // Until the impatient member has ended and the patient one has handled everything (or ended).
      await within(
        PATIENT_MS,
        () =>
          impatient.state.endedAfterMs !== null &&
          (patient.handled.size === RECORDS || patient.state.endedAfterMs !== null),
      );
      expect(impatient.state.error).toBeInstanceOf(TransportUnreachableError);
      expect(impatient.state.endedAfterMs).toBeGreaterThanOrEqual(GIVE_UP_MS);
      // It kept trying: more than one failure, each told and counted, each a failed start.
      expect(impatient.faults.length).toBeGreaterThan(1);
      expect(impatient.counted()).toBe(impatient.faults.length);
      expect(new Set(impatient.faults.map((f) => f.operation))).toEqual(new Set(['connection']));
      expect(faultsWhileUnreachable).toBeGreaterThan(0);
      expect(patient.state).toEqual({ endedAfterMs: null, error: undefined });
      expect(patient.handled.size).toBe(RECORDS);
    } finally {
      await Promise.all([impatient, patient].map((m) => m.receiver.close()));
      await Promise.all([impatient.output, patient.output]);
      await Promise.all([never.close(), late.close()]);
    }
  });

  it('a receiver closed while its start still waits for the broker closes without waiting for the broker, and leaves no connection behind once the broker answers', async () => {
    const topic = await eventTopics.topicWith(1, 1, 1);
    const late = await LateProxy.reserve();
    // The client's own retries: its connect is still under way when the receiver closes.
    const closing = member(kind, late.address, topic, PATIENT_MS, false);
    try {
      await new Promise((resolve) => setTimeout(resolve, 500));
      const closingAt = Date.now();
      await closing.receiver.close();
      await closing.output;
      expect(Date.now() - closingAt).toBeLessThan(CLOSE_BOUND_MS);
      await late.open(BROKER);
      // Long enough for the client's next connect attempt to reach the broker.
      await new Promise((resolve) => setTimeout(resolve, 4_000));
      expect(late.connections).toBe(0);
    } finally {
      await late.close();
    }
  });

  it('a receiver whose start the broker refuses for another reason than an outage errors at once, telling no fault', async () => {
    const refused = member(kind, BROKER, 'an invalid topic name!', PATIENT_MS);
    try {
      await within(PATIENT_MS, () => refused.state.endedAfterMs !== null);
      expect(refused.state.error).toBeInstanceOf(Error);
      expect(refused.state.error).not.toBeInstanceOf(TransportUnreachableError);
      expect(refused.faults).toEqual([]);
    } finally {
      await refused.receiver.close();
      await refused.output;
    }
  });
});
