import { createConnection } from 'node:net';
import { machine, type Scenario, writeSection } from './lib';

/** Scenarios by name, loaded lazily so one scenario's dependencies never slow another. */
const scenarios: Record<string, () => Promise<{ default: Scenario }>> = {
  core: () => load('core'),
  latency: () => load('latency'),
  profile: () => load('profile'),
  isolation: () => load('isolation'),
  kafka: () => load('kafka'),
  'kafka-redelivery': () => load('kafka-redelivery'),
  threads: () => load('threads'),
  'threads-scaling': () => load('threads-scaling'),
  'hot-key': () => load('hot-key'),
  claims: () => load('claims'),
  memory: () => load('memory'),
  soak: () => load('soak'),
  dashboard: () => load('dashboard'),
};

/** A scenario module, required when it runs (a CommonJS require: the bench runs under ts-node's register hook). */
function load(name: string): Promise<{ default: Scenario }> {
  return Promise.resolve(require(`./scenarios/${name}`));
}

/** Why a scenario cannot run here (a broker it needs is down), or null when it can. Checked when running all. */
const preconditions: Record<string, () => Promise<string | null>> = {
  kafka: () =>
    listening(
      '127.0.0.1',
      9092,
      'no Kafka broker answers on 127.0.0.1:9092 (start one: scripts/brokers/kafka.sh)',
    ),
  'kafka-redelivery': () =>
    listening(
      '127.0.0.1',
      9092,
      'no Kafka broker answers on 127.0.0.1:9092 (start one: scripts/brokers/kafka.sh)',
    ),
};

/** Resolves to null when something accepts a TCP connection on host:port within a second, else to `reason`. */
function listening(host: string, port: number, reason: string): Promise<string | null> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 1000 });
    const done = (result: string | null) => {
      socket.destroy();
      resolve(result);
    };
    socket.once('connect', () => done(null));
    socket.once('timeout', () => done(reason));
    socket.once('error', () => done(reason));
  });
}

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const all = !name || name === 'all';
  const names = all ? Object.keys(scenarios) : [name];
  for (const n of names) {
    const load = scenarios[n];
    if (!load) {
      console.error(`unknown scenario '${n}'; known: ${Object.keys(scenarios).join(', ')}`);
      process.exitCode = 2;
      return;
    }
    const skip = await preconditions[n]?.();
    if (skip) {
      console.log(`\n## ${n}: skipped, ${skip}`);
      if (!all) process.exitCode = 1;
      continue;
    }
    const scenario = (await load()).default;
    console.log(`\n## ${n}: ${scenario.title}\n(${machine()})\n`);
    const section = await scenario.run(all ? [] : args);
    writeSection(
      n,
      `## ${n}: ${scenario.title}\n\nMachine: ${machine()}. Reproduce: \`npm run bench -- ${n}\`.\n\n${section}`,
    );
  }
}

void main();
