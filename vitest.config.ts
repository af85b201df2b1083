import { availableParallelism } from 'node:os';
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
    // Vitest's default is one worker fewer than the cores: a single worker on a 2-core machine.
    // Most files wait on child processes, sockets and timers, so one per core keeps both busy.
    maxWorkers: Math.max(2, availableParallelism()),
  },
});
