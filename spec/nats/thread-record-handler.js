// The thread handler of jetstream-threads.spec.ts. Plain CommonJS: each worker thread imports it.

/** What reached the thread: the message's own field names, and its payload. */
exports.describe = async (message) => ({
  fields: Object.keys(message).sort(),
  subject: message.subject,
  n: Number(new TextDecoder().decode(message.data)),
});
