import { defineConfig } from 'vitest/config';
import { slowTests } from './test/tiers.js';

// The slow tier, run by `npm run test:all` after the fast one.
export default defineConfig({
  test: {
    include: slowTests,
    environment: 'node',
    testTimeout: 30_000,
    hookTimeout: 30_000,
    pool: 'forks',
  },
});
