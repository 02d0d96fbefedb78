/**
 * The page's script bundled for the browser. The package build replaces this module with the bundle
 * (see tsup.config.ts); run from the sources (specs, examples) it is null, and `clientScript()` bundles
 * the script itself.
 */
export const CLIENT_BUNDLE: string | null = null;
