import { spawnSync } from 'node:child_process';
import { createConnection } from 'node:net';
import { publish, refreshPages, type Scenario } from './report';

/**
 * `npm run bench` runs every scenario; `npm run bench -- <name> [--rounds n] [args]` one of them;
 * `npm run bench -- pages` only rewrites BENCHMARKS.md's summary and the quoted figures from the results.
 * The summary lists the scenarios in this order.
 */
export const scenarios: Record<string, () => { default: Scenario }> = {
  core: () => require('./scenarios/core'),
  profile: () => require('./scenarios/profile'),
  instructions: () => require('./scenarios/instructions'),
  batches: () => require('./scenarios/batches'),
  'hot-key': () => require('./scenarios/hot-key'),
  isolation: () => require('./scenarios/isolation'),
  memory: () => require('./scenarios/memory'),
  threads: () => require('./scenarios/threads'),
  kafka: () => require('./scenarios/kafka'),
  'kafka-confluent': () => require('./scenarios/kafka-confluent'),
  'kafka-memory': () => require('./scenarios/kafka-memory'),
  'kafka-redelivery': () => require('./scenarios/kafka-redelivery'),
  tracing: () => require('./scenarios/tracing'),
};

const KAFKA = '127.0.0.1:9092';
/** Scenarios that need a broker: skipped (not failed) when running them all and it does not answer. */
const brokers: Record<string, string> = {
  kafka: KAFKA,
  'kafka-confluent': KAFKA,
  'kafka-memory': KAFKA,
  'kafka-redelivery': KAFKA,
  batches: KAFKA,
};

/** Scenarios that need a program: skipped (not failed) when running them all and it is not on PATH. */
const programs: Record<string, string> = { instructions: 'valgrind' };

/** Whether `program` runs (`program --version` exits 0). */
function installed(program: string): boolean {
  return spawnSync(program, ['--version'], { stdio: 'ignore' }).status === 0;
}

/** Whether something accepts a TCP connection on `address` within a second. */
function listening(address: string): Promise<boolean> {
  const [host, port] = address.split(':');
  return new Promise((resolve) => {
    const socket = createConnection({ host, port: Number(port), timeout: 1000 });
    const done = (up: boolean) => {
      socket.destroy();
      resolve(up);
    };
    socket.once('connect', () => done(true));
    socket.once('timeout', () => done(false));
    socket.once('error', () => done(false));
  });
}

/** The scenario's module, or undefined (said on the console) while a registered scenario has none yet. */
function loaded(name: string, load: () => { default: Scenario }): Scenario | undefined {
  try {
    return load().default;
  } catch (err) {
    if ((err as { code?: string }).code !== 'MODULE_NOT_FOUND' || !String(err).includes(`scenarios/${name}`))
      throw err;
    console.log(`${name}: skipped, bench/scenarios/${name}.ts is not there yet`);
    return undefined;
  }
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const order = Object.keys(scenarios);
  if (argv[0] === 'pages') return refreshPages(order);
  const all = argv.length === 0 || argv[0] === 'all';
  const at = argv.indexOf('--rounds');
  const rounds = at >= 0 ? Number(argv[at + 1]) : undefined;
  const args = argv.slice(1).filter((_, i) => i + 1 !== at && i + 1 !== at + 1);
  for (const name of all ? order : [argv[0]]) {
    const load = scenarios[name];
    if (!load) {
      console.error(`unknown scenario '${name}'; known: ${order.join(', ')}`);
      process.exitCode = 2;
      return;
    }
    const broker = brokers[name];
    if (broker && !(await listening(broker))) {
      console.log(`${name}: skipped, no broker answers on ${broker} (scripts/brokers/kafka.sh starts one)`);
      if (!all) process.exitCode = 1;
      continue;
    }
    const program = programs[name];
    if (program && !installed(program)) {
      console.log(`${name}: skipped, \`${program}\` is not installed (Debian: apt-get install ${program})`);
      if (!all) process.exitCode = 1;
      continue;
    }
    const scenario = loaded(name, load);
    if (!scenario) continue;
    console.log(`\n## ${name}: ${scenario.title}\n`);
    const report = await scenario.run({ rounds, args: all ? [] : args });
    const command = ['npm run bench --', name, ...(rounds ? ['--rounds', String(rounds)] : []), ...args];
    publish(name, scenario.title, command.join(' '), report, order);
    console.log(`${report.tables}\n\nwritten: bench/results/${name}.md`);
  }
}

if (require.main === module) void main();
