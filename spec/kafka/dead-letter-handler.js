// The thread handler of dead-letter-topic.spec.ts. Plain CommonJS: each worker thread imports it.

/** Fails every record, as a handler that cannot bill it would. */
exports.fail = async (message) => {
  throw new TypeError(`cannot bill ${new TextDecoder().decode(message.key)} in a thread`);
};
