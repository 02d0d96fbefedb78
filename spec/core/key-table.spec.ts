import { CHECK_EVERY, type KeyRecord, KeyTable, POOL_LIMIT, PROBE_LIMIT } from '../../src/dispatch/key-table';

type Table = KeyTable<string, number>;

/** Takes the record of `key` and gives it a message in the window, as a dispatcher admitting one would. */
function open(table: Table, key: number) {
  const record = table.take(key);
  record.unfinished++;
  return record;
}

/** The record's last message finished: it holds nothing. */
function release(table: Table, record: KeyRecord<string, number>) {
  record.unfinished = 0;
  table.letGoIfIdle(record);
}

/** The record of `key` if it holds anything. */
function live(table: Table, key: number) {
  return table.live().find((record) => record.key === key);
}

describe('KeyTable (the keys of one dispatcher)', () => {
  it('counts as live only the records that have not drained', () => {
    const table = new KeyTable<string, number>(2);
    const a = open(table, 1);
    open(table, 2);
    expect(table.liveCount).toBe(2);
    release(table, a);
    expect(table.liveCount).toBe(1);
    expect(live(table, 1)).toBeUndefined();
    expect(live(table, 2)).toBeDefined();
  });

  it('gives a key that comes back the record it left, still filed under it', () => {
    const table = new KeyTable<string, number>(2);
    const first = open(table, 7);
    release(table, first);
    expect(first.unfinished).toBe(0);
    const again = table.take(7);
    expect(again).toBe(first);
    expect(table.liveCount + table.filed).toBe(1);
  });

  it('never keeps more than POOL_LIMIT keys of idle records, however many keys pass', () => {
    const table = new KeyTable<string, number>(2);
    const created = new Set<object>();
    let most = 0;
    for (let key = 0; key < 10 * POOL_LIMIT; key++) {
      const record = open(table, key);
      created.add(record);
      release(table, record);
      most = Math.max(most, table.liveCount + table.filed);
    }
    expect(table.liveCount).toBe(0);
    expect(most).toBe(POOL_LIMIT);
    // Once the filed pool is full, idle records are reused for new keys instead of allocated.
    expect(created.size).toBe(POOL_LIMIT + 1);
  });

  it('keeps only PROBE_LIMIT filed once filed records are not taken back, and files POOL_LIMIT again once keys come back', () => {
    const table = new KeyTable<string, number>(2);
    // Keys that never recur: after one look, the filed pool shrinks to the probes.
    for (let key = 0; key < CHECK_EVERY; key++) release(table, open(table, key));
    expect(table.liveCount + table.filed).toBe(PROBE_LIMIT);
    // A key space of 512 that recurs: within two looks, filing pays again and every key stays filed.
    for (let i = 0; i < 3 * CHECK_EVERY; i++) release(table, open(table, 1_000_000 + (i % 512)));
    expect(table.liveCount + table.filed).toBeGreaterThanOrEqual(512);
    // Still filed: taking it back adds no key.
    const size = table.liveCount + table.filed;
    table.take(1_000_000);
    expect(table.liveCount + table.filed).toBe(size);
  });

  it('lets one idle record in 16 replace the one filed longest ago once the filed pool is full', () => {
    const table = new KeyTable<string, number>(2);
    for (let key = 0; key < POOL_LIMIT; key++) release(table, open(table, key));
    const late: Array<ReturnType<typeof open>> = [];
    for (let key = POOL_LIMIT; key < POOL_LIMIT + 16; key++) {
      const record = open(table, key);
      late.push(record);
      release(table, record);
    }
    expect(table.liveCount + table.filed).toBe(POOL_LIMIT);
    // The 16th took the place of key 0's; the 15 before it left the map.
    expect(table.take(POOL_LIMIT + 15)).toBe(late[15]);
    expect(table.liveCount + table.filed).toBe(POOL_LIMIT);
    table.take(0);
    expect(table.liveCount + table.filed).toBe(POOL_LIMIT + 1);
  });

  it('lets the filed records go in the order their keys came in, the hand going on from where it stopped', () => {
    const table = new KeyTable<string, number>(2);
    for (let key = 0; key < POOL_LIMIT; key++) release(table, open(table, key));
    // Keys 0 and 1 come back and are live again: the hand passes over them.
    open(table, 0);
    open(table, 1);
    release(table, open(table, POOL_LIMIT));
    release(table, open(table, POOL_LIMIT + 1));
    // Two slots are free again (0 and 1 are live): both new keys are filed, the pool is full.
    for (let key = POOL_LIMIT + 2; key < POOL_LIMIT + 2 + 2 * 16; key++) release(table, open(table, key));
    // Two refreshes: keys 2 and 3, the oldest filed, left the map; the live 0 and 1 stayed.
    expect(live(table, 0)).toBeDefined();
    expect(live(table, 1)).toBeDefined();
    expect(table.liveCount + table.filed).toBe(POOL_LIMIT + 2);
    // Key 4 is still filed (taking it back adds no key); keys 2 and 3 come back as new keys.
    table.take(4);
    expect(table.liveCount + table.filed).toBe(POOL_LIMIT + 2);
    table.take(2);
    table.take(3);
    expect(table.liveCount + table.filed).toBe(POOL_LIMIT + 4);
  });

  it('admits a message while its key is under its share and has nothing parked, and parks it otherwise', () => {
    const table = new KeyTable<string, number>(2);
    const record = open(table, 1);
    expect(table.admits(record)).toBe(true);
    record.unfinished++;
    expect(table.admits(record)).toBe(false);
    table.park(record, 'a');
    table.park(record, 'b');
    record.unfinished--;
    // Its share has room again, but its parked messages go first.
    expect(table.admits(record)).toBe(false);
    expect(table.admits(record, true)).toBe(true);
    expect(table.unpark(record)).toBe('a');
    expect(table.parkedCount).toBe(1);
    expect(table.backlogOf(1)).toBe(2);
    expect(table.hotKeys(1)).toEqual([{ key: 1, backlog: 2, parked: 1 }]);
  });

  it('keeps a record that has messages parked or a placement on the lanes', () => {
    const table = new KeyTable<string, number>(1);
    const parked = open(table, 1);
    table.park(parked, 'a');
    release(table, parked);
    const placed = open(table, 2);
    placed.placement = {};
    release(table, placed);
    expect(table.liveCount).toBe(2);
    placed.placement = null;
    table.letGoIfIdle(placed);
    expect(table.liveCount).toBe(1);
  });

  it('forgets every record on clear', () => {
    const table = new KeyTable<string, number>(2);
    open(table, 1);
    release(table, open(table, 2));
    table.clear();
    expect(table.liveCount + table.filed).toBe(0);
    expect(table.liveCount).toBe(0);
  });
});
