// Jest runs specs as CommonJS and cannot load an ES-module-only package (@platformatic/kafka), which
// Node itself loads with require(). This transform turns such a package's files into CommonJS.
const { transformSync } = require('esbuild');

module.exports = {
  process(source, filename) {
    const { code, map } = transformSync(source, {
      loader: 'js',
      format: 'cjs',
      target: 'node20',
      sourcefile: filename,
      sourcemap: 'inline',
      // CommonJS has no import.meta: its one use (createRequire(import.meta.url)) gets the file's URL.
      define: { 'import.meta.url': '__importMetaUrl' },
      banner: "const __importMetaUrl = require('node:url').pathToFileURL(__filename).href;",
    });
    return { code, map };
  },
};
