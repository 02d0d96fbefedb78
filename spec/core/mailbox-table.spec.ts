import { MailboxState } from '../../src/engine/mailbox';
import { MailboxTable, POOL_LIMIT } from '../../src/engine/mailbox-table';

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
    first.queue.push('m');
    table.release(first);
    expect(first.queue.size).toBe(0);
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
      most = Math.max(most, table.size);
      created.add(mailbox);
      table.release(mailbox);
    }
    expect(table.live).toBe(0);
    expect(most).toBe(POOL_LIMIT);
    // Each sweep makes the filed mailboxes spares: they serve new keys instead of new allocations.
    expect(created.size).toBe(POOL_LIMIT);
  });

  it('sweeps only once as many mailboxes are filed as are live, and keeps POOL_LIMIT of them as spares', () => {
    const table = new MailboxTable<string, number, never>();
    const live = 3 * POOL_LIMIT;
    const mailboxes = Array.from({ length: live }, (_, key) => open(table, key));
    // Filed below the live count: still in the map under their keys.
    for (let key = 0; key < live / 2 - 1; key++) table.release(mailboxes[key]);
    expect(table.size).toBe(live);
    expect(table.take(0)).toBe(mailboxes[0]);
    table.release(mailboxes[0]);
    // As many filed as live: the map keeps the live ones only.
    table.release(mailboxes[live / 2 - 1]);
    expect(table.size).toBe(live / 2);
    expect(table.live).toBe(live / 2);
    expect(table.get(live - 1)).toBe(mailboxes[live - 1]);
    // Of the swept ones, POOL_LIMIT serve new keys; the rest were let go.
    const reused = new Set<object>(mailboxes);
    let fresh = 0;
    for (let key = live; key < live + live / 2; key++) {
      const mailbox = table.take(key);
      expect(mailbox.state).toBe(MailboxState.Pooled);
      if (!reused.has(mailbox)) fresh++;
    }
    expect(fresh).toBe(live / 2 - POOL_LIMIT);
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
