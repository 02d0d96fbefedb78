import { join } from 'node:path';
import { buildSync, type Plugin } from 'esbuild';

/**
 * Bundles the page's script (`client/main.ts` and what it imports) into one browser script with esbuild.
 * Run when the sources are built or bundled (see `clientBundlePlugin`), and by the dashboard on first use
 * when run from the sources; never in the published package, which carries the result.
 */
export function bundleClient(): string {
  const result = buildSync({
    entryPoints: [join(__dirname, 'client', 'main.ts')],
    bundle: true,
    minify: true,
    format: 'iife',
    platform: 'browser',
    target: 'es2020',
    write: false,
    legalComments: 'none',
    logLevel: 'warning',
  });
  return result.outputFiles[0].text;
}

/**
 * An esbuild plugin that puts the bundled page script into `client-bundle.ts`: a build of the sources
 * (the package, a benchmark's child) then serves it without bundling anything at run time.
 */
export function clientBundlePlugin(): Plugin {
  return {
    name: 'keyed-dispatch-dashboard-client',
    setup(build) {
      build.onLoad({ filter: /[\\/]src[\\/]dashboard[\\/]client-bundle\.ts$/ }, () => ({
        contents: `export const CLIENT_BUNDLE = ${JSON.stringify(bundleClient())};`,
        loader: 'ts',
      }));
    },
  };
}
