/**
 * Per-key batches: a ledger posts each account's entries to its store in bulk, one round trip for all
 * the entries of an account that are waiting, in order, instead of one round trip per entry. An entry
 * the store refuses fails its whole call; the policy then posts that batch's entries one at a time, so
 * only the bad entry is dead-lettered and the others are posted.
 *
 *   npm run example -- batches
 */
import { lastValueFrom, toArray } from 'rxjs';
import { fromIterable, keyedBatchDispatch, retryPolicy } from '../src';

interface Entry {
  account: string;
  seq: number;
  amount: number;
}

const ACCOUNTS = 20;
const ENTRIES_PER_ACCOUNT = 50;

// Each account's entries arrive together (a statement import); entry 137 has no valid amount.
const entries: Entry[] = Array.from({ length: ACCOUNTS * ENTRIES_PER_ACCOUNT }, (_, seq) => ({
  account: `acc-${Math.floor(seq / ENTRIES_PER_ACCOUNT)}`,
  seq,
  amount: seq === 137 ? Number.NaN : 10,
}));

const balances = new Map<string, number>();
const lastPosted = new Map<string, number>();
let storeCalls = 0;
let orderViolations = 0;

/** The store: a round trip of 2 ms per call, however many entries it carries; all or nothing. */
async function postEntries(account: string, batch: Entry[]): Promise<number> {
  storeCalls++;
  await new Promise((resolve) => setTimeout(resolve, 2));
  const bad = batch.find((entry) => !Number.isFinite(entry.amount));
  if (bad !== undefined) throw new RangeError(`entry ${bad.seq} has no valid amount`);
  for (const entry of batch) {
    if (entry.seq < (lastPosted.get(account) ?? -1)) orderViolations++;
    lastPosted.set(account, entry.seq);
    balances.set(account, (balances.get(account) ?? 0) + entry.amount);
  }
  return batch.length;
}

async function main(): Promise<void> {
  const deadLetters: string[] = [];
  const posted = await lastValueFrom(
    fromIterable(entries).pipe(
      keyedBatchDispatch({
        key: (entry) => entry.account,
        // Up to 64 waiting entries of one account per call; the account's next call waits for this one.
        handle: (batch, { key }) => postEntries(key, batch),
        maxBatch: 64,
        failurePolicy: retryPolicy<Entry, string>({
          maxAttempts: 3,
          backoff: { initialMs: 20, maxMs: 200 },
          // A refused amount is not worth retrying: the batch is taken apart at once.
          retryable: (err) => !(err instanceof RangeError),
          deadLetter: (entry, err) => {
            deadLetters.push(`entry ${entry.seq} of ${entry.account}: ${(err as Error).message}`);
          },
        }),
      }),
      toArray(),
    ),
  );
  const count = posted.reduce((sum, n) => sum + n, 0);
  console.log(
    `posted ${count} of ${entries.length} entries in ${storeCalls} store calls ` +
      `(one entry per call would take ${entries.length})`,
  );
  console.log(`balance of acc-2: ${balances.get('acc-2')}; per-account order violations: ${orderViolations}`);
  console.log(`dead-lettered: ${deadLetters.join('; ')}`);
}

void main();
