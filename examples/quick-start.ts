import { keyedDispatch, LocalBus, retryPolicy } from '../src';

interface Deposit {
  account: string;
  amount: number;
}

const balances = new Map<string, number>();

/** A store write that takes a few milliseconds and holds no lane while it waits. */
async function applyDeposit(deposit: Deposit): Promise<string> {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
  const balance = (balances.get(deposit.account) ?? 0) + deposit.amount;
  balances.set(deposit.account, balance);
  return `${deposit.account} +${deposit.amount} = ${balance}`;
}

const bus = new LocalBus<Deposit>();

bus
  .receive()
  .pipe(
    keyedDispatch({
      key: (deposit) => deposit.account, // one mailbox per account: its deposits run one at a time, in order
      handle: (deposit) => applyDeposit(deposit), // any ObservableInput; accounts run in parallel
      maxInFlight: 256, // unfinished messages before intake stops
      // A failing deposit: retried 3 times in its account's mailbox, then settled failed. Left out, a
      // receiver's message is retried until it succeeds, each failure logged; the output never errors.
      failurePolicy: retryPolicy({ maxAttempts: 3 }),
    }),
  )
  .subscribe({
    next: (line) => console.log(line),
    error: (err) => {
      console.error(err);
      process.exitCode = 1;
    },
    complete: () => console.log(`done: ${balances.size} accounts, balances ${JSON.stringify([...balances])}`),
  });

async function main(): Promise<void> {
  for (let i = 1; i <= 12; i++) {
    await bus.send({ account: `acc-${i % 3}`, amount: i }); // resolves once queued for the dispatcher
  }
  bus.close(); // the output completes once every deposit sent has been handled
}

main();
