#!/usr/bin/env node
// Runs every benchmark under bench/ (files named *.bench.ts) with tsx, one after the other.
// BENCH_SMOKE=1 shrinks every benchmark to a tiny size so CI checks they still run.
import { spawnSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const only = process.argv.slice(2);
const files = readdirSync(here)
  .filter((name) => name.endsWith('.bench.ts'))
  .filter((name) => only.length === 0 || only.some((wanted) => name.startsWith(wanted)))
  .sort();
if (files.length === 0) {
  console.log('no benchmarks found');
}
let failed = 0;
for (const file of files) {
  console.log(`\n## ${file}${process.env.BENCH_SMOKE ? ' (smoke mode)' : ''}`);
  const result = spawnSync(process.execPath, ['--import', 'tsx', join(here, file)], { stdio: 'inherit' });
  if (result.status !== 0) {
    failed += 1;
    console.log(`benchmark ${file} failed with exit code ${result.status}`);
  }
}
process.exitCode = failed === 0 ? 0 : 1;
