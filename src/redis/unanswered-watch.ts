/**
 * Resolves or rejects as `reply` does. While it has no answer — once `firstMs` has passed, then every
 * `everyMs`, for as long as `overdue` returns true — tells it how long it has waited: a server that stopped answering without closing
 * its connections (hung, or cut off by a partition without a reset) shows no other way. The command is
 * not abandoned: an answer that comes late is still used, as giving up on an `XREADGROUP` the server
 * may yet run would leave its entries pending with nobody to handle them.
 */
export function watchUnanswered<R>(
  reply: Promise<R>,
  firstMs: number,
  everyMs: number,
  overdue: (waitedMs: number) => boolean,
): Promise<R> {
  const sentAt = Date.now();
  let timer: ReturnType<typeof setTimeout> | undefined;
  // Unref'd: the command's own connection keeps the process alive while it waits; a watch never should.
  const check = (): void => {
    if (overdue(Date.now() - sentAt)) timer = setTimeout(check, everyMs).unref();
  };
  timer = setTimeout(check, firstMs).unref();
  return reply.finally(() => clearTimeout(timer));
}
