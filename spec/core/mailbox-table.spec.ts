import { CHECK_EVERY, MailboxTable, POOL_LIMIT, PROBE_LIMIT } from '../../src/dispatch/event-loop-router';
import { MailboxState } from '../../src/engine/mailbox';

/** Takes the mailbox of `key` and marks it live, as a dispatcher opening it on a lane would. */
function open(table: MailboxTable<string, number, never>, key: number) {
  const mailbox = table.take(key);
  mailbox.state = MailboxState.Idle;
  return mailbox;
}

describe('MailboxTable (the mailboxes of one dispatcher and its pool)', () => {
  it('counts as live only the mailboxes that have not drained', () => {
    const table = new MailboxTable<string, number, never>();
    const a = open(table, 1);
    open(table, 2);
    expect(table.live).toBe(2);
    table.release(a);
    expect(table.live).toBe(1);
    expect(table.get(1)).toBeUndefined();
    expect(table.get(2)).toBeDefined();
  });

  it('gives a key that comes back the mailbox it drained, still filed under it', () => {
    const table = new MailboxTable<string, number, never>();
    const first = open(table, 7);
    first.pushMessage('m');
    table.release(first);
    expect(first.queued).toBe(0);
    const again = table.take(7);
    expect(again).toBe(first);
    expect(again.state).toBe(MailboxState.Pooled);
    expect(table.size).toBe(1);
  });

  it('never keeps more than POOL_LIMIT keys of drained mailboxes, however many keys pass', () => {
    const table = new MailboxTable<string, number, never>();
    const created = new Set<object>();
    let most = 0;
    for (let key = 0; key < 10 * POOL_LIMIT; key++) {
      const mailbox = open(table, key);
      created.add(mailbox);
      table.release(mailbox);
      most = Math.max(most, table.size);
    }
    expect(table.live).toBe(0);
    expect(most).toBe(POOL_LIMIT);
    // Once the filed pool is full, drained mailboxes are reused for new keys instead of allocated.
    expect(created.size).toBe(POOL_LIMIT + 1);
  });

  it('keeps only PROBE_LIMIT filed once filed mailboxes are not taken back, and files POOL_LIMIT again once keys come back', () => {
    const table = new MailboxTable<string, number, never>();
    // Keys that never recur: after one look, the filed pool shrinks to the probes.
    for (let key = 0; key < CHECK_EVERY; key++) table.release(open(table, key));
    expect(table.size).toBe(PROBE_LIMIT);
    // A key space of 512 that recurs: within two looks, filing pays again and every key stays filed.
    for (let i = 0; i < 3 * CHECK_EVERY; i++) table.release(open(table, 1_000_000 + (i % 512)));
    expect(table.size).toBeGreaterThanOrEqual(512);
    const again = table.take(1_000_000);
    expect(again.state).toBe(MailboxState.Pooled);
  });

  it('lets one drained mailbox in 16 replace the one filed longest ago once the filed pool is full', () => {
    const table = new MailboxTable<string, number, never>();
    for (let key = 0; key < POOL_LIMIT; key++) table.release(open(table, key));
    const late: Array<ReturnType<typeof open>> = [];
    for (let key = POOL_LIMIT; key < POOL_LIMIT + 16; key++) {
      const mailbox = open(table, key);
      late.push(mailbox);
      table.release(mailbox);
    }
    expect(table.size).toBe(POOL_LIMIT);
    // The 16th took the place of key 0's; the 15 before it left the map.
    expect(table.take(POOL_LIMIT + 15)).toBe(late[15]);
    expect(table.size).toBe(POOL_LIMIT);
    expect(table.take(0).state).toBe(MailboxState.Pooled);
    expect(table.size).toBe(POOL_LIMIT + 1);
  });

  it('lets the filed mailboxes go in the order their keys came in, the hand going on from where it stopped', () => {
    const table = new MailboxTable<string, number, never>();
    for (let key = 0; key < POOL_LIMIT; key++) table.release(open(table, key));
    // Keys 0 and 1 come back and are live again: the hand passes over them.
    open(table, 0);
    open(table, 1);
    table.release(open(table, POOL_LIMIT));
    table.release(open(table, POOL_LIMIT + 1));
    // Two slots are free again (0 and 1 are live): both new keys are filed, the pool is full.
    for (let key = POOL_LIMIT + 2; key < POOL_LIMIT + 2 + 2 * 16; key++) table.release(open(table, key));
    // Two refreshes: keys 2 and 3, the oldest filed, left the map; the live 0 and 1 stayed.
    expect(table.get(0)).toBeDefined();
    expect(table.get(1)).toBeDefined();
    expect(table.size).toBe(POOL_LIMIT + 2);
    // Key 4 is still filed (taking it back adds no key); keys 2 and 3 come back as new keys.
    table.take(4);
    expect(table.size).toBe(POOL_LIMIT + 2);
    table.take(2);
    table.take(3);
    expect(table.size).toBe(POOL_LIMIT + 4);
  });

  it('forgets every mailbox on clear', () => {
    const table = new MailboxTable<string, number, never>();
    open(table, 1);
    table.release(open(table, 2));
    table.clear();
    expect(table.size).toBe(0);
    expect(table.live).toBe(0);
  });
});
