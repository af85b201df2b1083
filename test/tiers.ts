// Which test files belong to which tier. `npm test` (the README's command) runs the fast tier;
// `npm run test:all` adds the slow tier: crash and kill tests, Monte Carlo calibration and held-out
// suites, browser tests and whole-CLI end-to-end runs through real processes.
export const slowTests = [
  'test/browser/**/*.test.ts',
  'test/reliability/**/*.test.ts',
  '**/*.slow.test.ts',
  'src/**/calibrate*.test.ts',
  'src/**/heldout*.test.ts',
  'src/cli/commands/persona-calibrate.test.ts',
  'src/store/crash.test.ts',
  'src/store/batch-crash.test.ts',
  'src/cli/exit-codes.test.ts',
  'src/cli/commands/gate.test.ts',
  // The CLI spawned as a process (start-up alone is seconds on a loaded machine).
  'test/action.test.ts',
  'test/cli.test.ts',
  'src/cli/commands/worker.test.ts',
  'src/cli/commands/ask.test.ts',
  'src/memory-drift/mitigation/reward-server-safety.test.ts',
  // A real PostgreSQL cluster started by the test.
  'src/store/postgres/pg-store.test.ts',
  // Every README command checked against the CLI's help (whole-document pass).
  'src/cli/readme-commands.test.ts',
  // Whole simulated runs through the CLI whose behaviour the fast tier checks in pure tests
  // (consensus-harness.test.ts, reference-metric.test.ts, label-sheet.test.ts): 19–27 s each under load.
  'src/persona-drift/analysis-extras.cli.test.ts',
  'src/cli/commands/memory-reference.test.ts',
  'src/cli/commands/memory-label-sheet.test.ts',
  // Two whole runs (memory, continuation) against a local server, every report format and the gate.
  'src/cli/unknown-cost-audits.test.ts',
  'src/gate/sanity-audits.test.ts',
];

export const allTests = ['src/**/*.test.ts', 'test/**/*.test.ts'];
