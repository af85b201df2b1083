/**
 * Peak memory of `--batch` against online (issue 44): one persona target of the paper-scale grid
 * (bench/scale-grid.mjs: ~320,000-character contexts, 12 positions × 2 arms × 25 probes; the first
 * 600 cells, BATCH_MEMORY_CELLS to change) and its judge stage, through `runAudit` under plain node
 * on dist/ (needs `npm run build`), online and with `--batch`, each phase in its own process,
 * against fake batch servers in a third (bench/batch-server.child.ts). Prints each phase's peak
 * RSS and the ratio batch ÷ online. Target: --batch peak ≤ 600 MB. BENCH_SMOKE=1: the smoke grid.
 * BATCH_MEMORY_CELLS=paper: the whole paper-scale grid (12 targets), online and with --batch.
 */
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
// BATCH_MEMORY_CELLS=paper runs the whole paper-scale grid (28,800 cells with the judge stage).
const cells = process.env.BATCH_MEMORY_CELLS === 'paper' ? 'paper' : Number(process.env.BATCH_MEMORY_CELLS ?? 600);
const TARGET_MB = 600;
if (!existsSync(join(here, '..', 'dist', 'experiment', 'run-audit.js'))) {
  throw new Error('bench/batch-memory runs the built package: run `npm run build` first');
}
const dir = mkdtempSync(join(tmpdir(), 'echolens-batch-memory-'));
const peaks: Record<string, number> = {};
try {
  // BATCH_MEMORY_MODES=batch measures one mode (the paper-scale online phase alone takes minutes).
  const modes = (process.env.BATCH_MEMORY_MODES ?? 'online,batch').split(',').filter((m): m is 'online' | 'batch' => m === 'online' || m === 'batch');
  for (const mode of modes) {
    const run = spawnSync(process.execPath, [join(here, 'batch-memory.child.mjs'), join(dir, `${mode}.db`), mode, String(cells)], {
      encoding: 'utf8',
      maxBuffer: 64 * 1024 * 1024,
    });
    const line = run.stdout.split('\n').find((l) => l.startsWith('{'));
    if (run.status !== 0 || line === undefined) throw new Error(`${mode} phase failed:\n${run.stderr.slice(-2000)}`);
    const result = JSON.parse(line) as { done: number; targetCells: number; wallS: number; peakRssMb: number };
    peaks[mode] = result.peakRssMb;
    console.log(
      `${mode.padEnd(7)} ${String(result.done).padStart(5)} cells done (${result.targetCells} target + judge)  wall ${result.wallS.toFixed(1)} s  peak RSS ${result.peakRssMb.toFixed(0)} MB`,
    );
  }
  if (peaks.batch !== undefined && peaks.online !== undefined) console.log(`--batch peak ÷ online peak: ${(peaks.batch / peaks.online).toFixed(2)}`);
  console.log(`target: --batch ≤ ${TARGET_MB} MB`);
  if (process.env.BENCH_SMOKE !== '1' && (peaks.batch ?? 0) > TARGET_MB) process.exitCode = 1;
} finally {
  rmSync(dir, { recursive: true, force: true });
}
