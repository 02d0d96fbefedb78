/**
 * Retry, backoff and dead letter: a store write that conflicts now and then is retried inside its
 * account's mailbox (that account's later deposits wait, the other accounts go on); a deposit that can
 * never be applied is dead-lettered, settled as failed, and the stream goes on.
 *
 *   npm run example -- failure-policy
 */
import { lastValueFrom, toArray } from 'rxjs';
import { fromIterable, keyedDispatch, retryPolicy } from '../src';

interface Deposit {
  account: string;
  amount: number;
  seq: number;
}

class VersionConflict extends Error {}

const deposits: Deposit[] = Array.from({ length: 12 }, (_, seq) => ({
  account: `acc-${seq % 3}`,
  amount: seq === 7 ? -5 : 10,
  seq,
}));
const attempts = new Map<number, number>();

/** A store write: every fourth deposit conflicts on its first attempt; a negative amount is refused. */
async function applyDeposit(deposit: Deposit): Promise<string> {
  const attempt = (attempts.get(deposit.seq) ?? 0) + 1;
  attempts.set(deposit.seq, attempt);
  await new Promise((resolve) => setTimeout(resolve, 5));
  if (deposit.amount < 0) throw new RangeError(`deposit ${deposit.seq} has a negative amount`);
  if (deposit.seq % 4 === 0 && attempt === 1) throw new VersionConflict(`deposit ${deposit.seq} conflicted`);
  return `${deposit.account}: deposit ${deposit.seq} applied on attempt ${attempt}`;
}

async function main(): Promise<void> {
  const deadLetters: string[] = [];
  const applied = await lastValueFrom(
    fromIterable(deposits).pipe(
      keyedDispatch({
        key: (deposit) => deposit.account,
        handle: (deposit) => applyDeposit(deposit),
        failurePolicy: retryPolicy({
          maxAttempts: 3,
          backoff: { initialMs: 20, maxMs: 200 },
          retryable: (err) => err instanceof VersionConflict, // a refused amount is not worth retrying
          deadLetter: (deposit, err, { attempts }) => {
            deadLetters.push(
              `deposit ${deposit.seq} after ${attempts} attempt(s): ${(err as Error).message}`,
            );
          },
        }),
      }),
      toArray(),
    ),
  );
  for (const line of applied) console.log(line);
  console.log(`applied ${applied.length} of ${deposits.length}; dead-lettered: ${deadLetters.join('; ')}`);
}

main().catch((err) => {
  console.error(err);
  process.exitCode = 1;
});
