import { defineConfig } from 'tsup';

export default defineConfig({
  entry: { index: 'src/index.ts', 'otel/index': 'src/otel/index.ts' },
  format: ['cjs', 'esm'],
  dts: true,
  sourcemap: true,
  clean: true,
  target: 'node20',
  external: ['rxjs', '@opentelemetry/api'],
});
