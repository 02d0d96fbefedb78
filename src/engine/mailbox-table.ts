import { Mailbox, MailboxState } from './mailbox';

/** Drained mailboxes a dispatcher keeps filed under their last key before it sweeps; as many again spare. */
export const POOL_LIMIT = 1024;

/**
 * The mailboxes of one dispatcher by key, and its pool of drained ones.
 *
 * A drained mailbox stays in the map under its last key (filed), so a key that comes back gets it back
 * with one lookup and no insertion. Once at least `POOL_LIMIT` are filed, and at least as many as are
 * live, the table sweeps: the live mailboxes move to a new map and the filed ones become spares, which
 * serve new keys. A sweep costs one step per mailbox in the map, less than the deletion per drained
 * mailbox it replaces: in a key space too large to recur (100,000 keys), deleting every drained key
 * from the Map was about a tenth of a Promise handler's dispatch. Memory never grows with the number of
 * keys seen: the map holds the live mailboxes and at most as many filed again (or `POOL_LIMIT`), and
 * at most `POOL_LIMIT` spares are kept.
 */
export class MailboxTable<T, K, R> {
  /** Live mailboxes, and filed ones under the key they last served. */
  private byKey = new Map<K, Mailbox<T, K, R>>();
  /** Pooled mailboxes still in the map. */
  private filed = 0;
  /** Spare mailboxes: a stack linked through `nextSpare`. */
  private spare: Mailbox<T, K, R> | null = null;
  private spareCount = 0;

  /** Mailboxes holding messages. */
  get live(): number {
    return this.byKey.size - this.filed;
  }

  /** Keys in the map: those with a live mailbox and those with a filed one. */
  get size(): number {
    return this.byKey.size;
  }

  /** The live mailbox of `key`, if it has one. */
  get(key: K): Mailbox<T, K, R> | undefined {
    const mailbox = this.byKey.get(key);
    return mailbox === undefined || mailbox.state === MailboxState.Pooled ? undefined : mailbox;
  }

  /**
   * The mailbox of `key`: its live one, else its filed one, else a spare or new one, in the map under
   * `key`. Unless it was live it is still `Pooled`: the caller opens it on a lane.
   */
  take(key: K): Mailbox<T, K, R> {
    const known = this.byKey.get(key);
    if (known !== undefined) {
      if (known.state === MailboxState.Pooled) this.filed--;
      return known;
    }
    let mailbox = this.spare;
    if (mailbox === null) mailbox = new Mailbox<T, K, R>();
    else {
      this.spare = mailbox.nextSpare;
      mailbox.nextSpare = null;
      this.spareCount--;
    }
    mailbox.key = key;
    this.byKey.set(key, mailbox);
    return mailbox;
  }

  /** `mailbox` ran dry: filed under its key (its last user must not touch it after this). */
  release(mailbox: Mailbox<T, K, R>): void {
    mailbox.reset();
    mailbox.state = MailboxState.Pooled;
    if (++this.filed >= POOL_LIMIT && this.filed >= this.byKey.size - this.filed) this.sweep();
  }

  /** Moves the live mailboxes to a new map; the filed ones become spares (as many as the spares keep). */
  private sweep(): void {
    const live = new Map<K, Mailbox<T, K, R>>();
    for (const [key, mailbox] of this.byKey) {
      if (mailbox.state !== MailboxState.Pooled) live.set(key, mailbox);
      else if (this.spareCount < POOL_LIMIT) {
        mailbox.nextSpare = this.spare;
        this.spare = mailbox;
        this.spareCount++;
      }
    }
    this.byKey = live;
    this.filed = 0;
  }

  /** The live mailboxes. */
  liveMailboxes(): Array<Mailbox<T, K, R>> {
    const live: Array<Mailbox<T, K, R>> = [];
    for (const mailbox of this.byKey.values()) if (mailbox.state !== MailboxState.Pooled) live.push(mailbox);
    return live;
  }

  /** Forgets every mailbox, live and pooled. */
  clear(): void {
    this.byKey.clear();
    this.filed = 0;
    this.spare = null;
    this.spareCount = 0;
  }
}
