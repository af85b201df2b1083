import { configDefaults, defineConfig } from 'vitest/config';
import { allTests, slowTests } from './test/tiers.js';

// The fast tier (the README's `npm test`); vitest.slow.config.ts runs the rest.
export default defineConfig({
  test: {
    include: allTests,
    exclude: [...configDefaults.exclude, ...slowTests],
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
