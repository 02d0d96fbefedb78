import { spawnSync } from 'node:child_process';

/**
 * Whether something accepts TCP connections on 127.0.0.1:`port` now. Synchronous (a child process
 * tries for up to 3 s), so a spec can decide at load time whether to run a test that needs the broker.
 */
export function brokerAnswers(port: number): boolean {
  const probe = `require('node:net').connect(${port}, '127.0.0.1')
    .on('connect', () => process.exit(0)).on('error', () => process.exit(1)).setTimeout(3000, () => process.exit(1));`;
  return spawnSync(process.execPath, ['-e', probe], { timeout: 5000 }).status === 0;
}
