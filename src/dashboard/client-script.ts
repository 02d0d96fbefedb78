import { join } from 'node:path';
import { CLIENT_BUNDLE } from './client-bundle';

let bundled: string | null = CLIENT_BUNDLE;

/**
 * The page's script: put into any build of the sources by `clientBundlePlugin` (the package's among
 * them); bundled on first use when run from the sources themselves (specs, examples).
 */
export function clientScript(): string {
  // A computed path: a build must not take the bundler (a development tool) along.
  bundled ??= (require(join(__dirname, 'bundle-client')) as typeof import('./bundle-client')).bundleClient();
  return bundled;
}
