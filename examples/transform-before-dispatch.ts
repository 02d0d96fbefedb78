// Deserializing, filtering and enriching messages before they are handled, while each message is still
// acknowledged only after its handler finished. A receiver is piped straight into keyedDispatch (behind
// another operator it would have to acknowledge on receipt), so the transformation lives in `key` and
// `handle`: `key` reads the parsed form, `handle` parses, filters (returning EMPTY) and enriches.
// `npm run example -- transform-before-dispatch`; it exits by itself.
import { EMPTY, lastValueFrom, type ObservableInput, toArray } from 'rxjs';
import { fromIterable, KeyedExecutor, keyedDispatch, type Settlement } from '../src';

/** A transport's raw record, as a Kafka or Redis receiver hands it over: a position and a payload. */
export interface RawRecord {
  offset: number;
  value: string;
}

interface Deposit {
  account: string;
  amount: number;
}

/** A deposit with what the handler looked up about its account. */
export interface EnrichedDeposit extends Deposit {
  offset: number;
  currency: string;
}

/** What one run did, in the order it happened. */
export interface TransformRun {
  /** `handled <offset>` when a handler finished, `ack <offset>` when the receiver acknowledged. */
  log: string[];
  acknowledged: Array<{ offset: number; outcome: Settlement }>;
  applied: EnrichedDeposit[];
  malformed: number[];
  balances: Record<string, number>;
  /** How many times a payload was deserialized. */
  parses: number;
}

const RECORDS: RawRecord[] = [
  { offset: 0, value: '{"account":"acc-1","amount":10}' },
  { offset: 1, value: '{"account":"acc-2","amount":5}' },
  { offset: 2, value: '{"account":"acc-1","amount":0}' },
  { offset: 3, value: '{"account":"acc-1","amount":7}' },
  { offset: 4, value: '{"account":"acc-2","amount":0}' },
  { offset: 5, value: 'not json' },
  { offset: 6, value: '{"account":"acc-2","amount":1}' },
  { offset: 7, value: '{"account":"acc-1","amount":2}' },
];

/**
 * Deserializes each message once, however often `key` and `handle` ask: the parsed form is kept next to
 * the raw message (in a WeakMap, so it goes when the message goes).
 */
function decoder<Raw extends object, Parsed>(parse: (raw: Raw) => Parsed): (raw: Raw) => Parsed {
  const parsed = new WeakMap<Raw, Parsed>();
  return (raw) => {
    if (parsed.has(raw)) return parsed.get(raw) as Parsed;
    const value = parse(raw);
    parsed.set(raw, value);
    return value;
  };
}

/** A lookup the handler enriches with (a cache or a service in real life). */
async function currencyOf(account: string): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, 1));
  return account === 'acc-2' ? 'GBP' : 'EUR';
}

export async function runTransformExample(records: readonly RawRecord[] = RECORDS): Promise<TransformRun> {
  const run: TransformRun = {
    log: [],
    acknowledged: [],
    applied: [],
    malformed: [],
    balances: {},
    parses: 0,
  };
  const decode = decoder((raw: RawRecord): Deposit | null => {
    run.parses++;
    try {
      return JSON.parse(raw.value) as Deposit;
    } catch {
      return null; // malformed: set aside by the handler below
    }
  });

  /** The handler of parsed deposits, as it would be written for a source of parsed messages. */
  async function applyDeposit(offset: number, deposit: Deposit): Promise<EnrichedDeposit> {
    const enriched = { ...deposit, offset, currency: await currencyOf(deposit.account) };
    run.balances[deposit.account] = (run.balances[deposit.account] ?? 0) + deposit.amount;
    run.applied.push(enriched);
    run.log.push(`handled ${offset}`);
    return enriched;
  }

  /** Nothing to do: EMPTY completes at once, emits nothing, and the message is settled `done` after it. */
  function skip(offset: number): ObservableInput<never> {
    run.log.push(`handled ${offset}`);
    return EMPTY;
  }

  const executor = new KeyedExecutor({ lanes: 2 });
  try {
    const receiver = fromIterable(records, {
      // Where a transport acknowledges: only after the message's handler finished.
      onSettled: (raw, outcome) => {
        run.acknowledged.push({ offset: raw.offset, outcome });
        run.log.push(`ack ${raw.offset}`);
      },
    });
    await lastValueFrom(
      receiver.pipe(
        keyedDispatch({
          executor,
          // The key reads the parsed form; a malformed message still needs a key.
          key: (raw: RawRecord) => decode(raw)?.account ?? '(malformed)',
          handle: (raw: RawRecord): ObservableInput<EnrichedDeposit> => {
            const deposit = decode(raw);
            if (deposit === null) {
              run.malformed.push(raw.offset); // a dead-letter topic in a service
              return skip(raw.offset);
            }
            if (deposit.amount <= 0) return skip(raw.offset); // filtered out
            return applyDeposit(raw.offset, deposit); // enriched and handled
          },
        }),
        toArray(),
      ),
    );
  } finally {
    executor.close();
  }
  return run;
}

async function main(): Promise<void> {
  const run = await runTransformExample();
  for (const line of run.log) console.log(line);
  console.log('balances:', run.balances, '· malformed offsets:', run.malformed, '· parses:', run.parses);
}

if (require.main === module) void main();
