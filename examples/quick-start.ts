import { keyedDispatch, LocalBus, retryPolicy } from '../src';

const balances = new Map<string, number>();
const bus = new LocalBus<{ account: string; amount: number }>(); // in-process; Kafka etc. plug in the same way

bus
  .receive()
  .pipe(
    keyedDispatch({
      key: (deposit) => deposit.account, // one mailbox per account: its deposits run one at a time, in order
      handle: async ({ account, amount }) => {
        await new Promise((resolve) => setTimeout(resolve, Math.random() * 5)); // a store write, holding no lane
        balances.set(account, (balances.get(account) ?? 0) + amount);
        return `${account} +${amount} = ${balances.get(account)}`;
      },
      // A deposit that throws is retried (3 attempts in all) in its account's mailbox, then dead-lettered.
      failurePolicy: retryPolicy({
        maxAttempts: 3,
        deadLetter: (deposit, err) => console.error(deposit, err),
      }),
    }),
  )
  .subscribe({
    next: (line) => console.log(line),
    complete: () => console.log(`done: ${balances.size} accounts`),
  });

for (let i = 1; i <= 12; i++) void bus.send({ account: `acc-${i % 3}`, amount: i });
bus.close(); // the output completes once every deposit sent has been handled
