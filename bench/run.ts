import { machine, type Scenario, writeSection } from './lib';

/** Scenarios by name, loaded lazily so one scenario's dependencies never slow another. */
const scenarios: Record<string, () => Promise<{ default: Scenario }>> = {
  core: () => import('./scenarios/core'),
  kafka: () => import('./scenarios/kafka'),
  threads: () => import('./scenarios/threads'),
};

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const names = name && name !== 'all' ? [name] : Object.keys(scenarios);
  for (const n of names) {
    const load = scenarios[n];
    if (!load) {
      console.error(`unknown scenario '${n}'; known: ${Object.keys(scenarios).join(', ')}`);
      process.exitCode = 2;
      return;
    }
    const scenario = (await load()).default;
    console.log(`\n## ${n}: ${scenario.title}\n(${machine()})\n`);
    const section = await scenario.run(args);
    writeSection(
      n,
      `## ${n}: ${scenario.title}\n\nMachine: ${machine()}. Reproduce: \`npm run bench -- ${n}\`.\n\n${section}`,
    );
  }
}

void main();
