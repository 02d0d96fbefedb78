// The thread handler of thread-records.spec.ts. Plain CommonJS: each worker thread imports it.

/** What reached the thread: the message's own field names, and its event. */
exports.describe = async (message) => ({
  fields: Object.keys(message).sort(),
  event: JSON.parse(new TextDecoder().decode(message.value)),
});
