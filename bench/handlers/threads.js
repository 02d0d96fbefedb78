// Handlers of the threads benchmark. Plain CommonJS: run by event-loop lanes (required), by thread
// lanes (imported by each thread) and by piscina (its worker file).

/**
 * A fixed amount of CPU work: `m.iterations` rounds of an FNV-style hash over the message number, kept
 * to 30 bits so it stays in small integers and costs the same on every thread.
 */
function hash(m) {
  let h = (2166136261 ^ m.n) & 0x3fffffff;
  for (let i = 0; i < m.iterations; i++) h = Math.imul(h ^ i, 16777619) & 0x3fffffff;
  return h;
}

exports.price = (m) => [hash(m)];

exports.trivial = (m) => [m.n];
