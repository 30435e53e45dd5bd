import { createRequire } from 'node:module';
import { defineConfig } from 'vitest/config';
import { programTags } from './test/helpers/programs.ts';

const require = createRequire(import.meta.url);

export default defineConfig({
  resolve: {
    // Vite would pick graphql's ESM build for our files while Node's own imports in the
    // dependencies get the CommonJS one: two copies of graphql refuse each other's types.
    alias: [{ find: /^graphql$/, replacement: require.resolve('graphql') }],
  },
  test: {
    include: ['test/**/*.test.ts'],
    testTimeout: 20_000,
    hookTimeout: 30_000,
    // Checks that drive Chromium, redis-server or Varnish carry its tag: skipped, and counted at
    // the end with what to install, where the program is missing.
    tags: programTags(),
    reporters: ['default', './test/helpers/skipped-summary.ts'],
  },
});
