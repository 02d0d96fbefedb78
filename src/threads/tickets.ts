import { TICKET_PAGE } from './protocol';

/**
 * The tickets of one dispatcher on thread lanes (see protocol.ts): shared pages of slots, and the
 * slots free for reuse. At most one ticket per unfinished message, so the pages never outgrow the
 * window; a new page is announced to every thread that runs the dispatcher's messages.
 */
export class TicketBoard {
  readonly pages: Int32Array[] = [];
  /** Tickets given back, reused most recent first. */
  private readonly free: number[] = [];
  private next = 0;

  constructor(private readonly onPage: (page: Int32Array) => void) {}

  take(): number {
    const reused = this.free.pop();
    if (reused !== undefined) return reused;
    const ticket = this.next++;
    if (ticket % TICKET_PAGE === 0) {
      const page = new Int32Array(new SharedArrayBuffer(TICKET_PAGE * Int32Array.BYTES_PER_ELEMENT));
      this.pages.push(page);
      this.onPage(page);
    }
    return ticket;
  }

  /** `ticket` is free again: its message finished or was withdrawn (a stale record never matches its next tag). */
  give(ticket: number): void {
    this.free.push(ticket);
  }
}
