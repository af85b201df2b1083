// Hostile ContextEcho archives given to `persona import` / `persona export` (issue #40): data-derived
// path parts, symbolic links out of the archive, FIFOs, a 1 GB file, deep nesting and prototype keys.
// Each is exit 2 naming the file (and the field where one is at fault), with no stack trace, no write
// outside the output folder and no hang.
import { execFileSync } from 'node:child_process';
import { existsSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, closeSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from '../../src/core/errors.js';
import { thrownBy } from '../../src/core/testing/thrown.js';
import { runCliInProcess } from '../../src/cli/testing/run-cli.js';
import { writeArchiveFiles } from '../../src/persona-drift/interchange-files.js';
import { spawnMeasured } from './measured.js';
import { ARCHIVE_TARGET, writeContextEchoArchive } from '../../src/persona-drift/testing/contextecho-archive.js';

const base = mkdtempSync(join(tmpdir(), 'echolens-hostile-archive-'));
let n = 0;
const fresh = () => {
  const dir = join(base, `case-${n++}`);
  mkdirSync(dir);
  return dir;
};
const cellDir = (archive: string, position = 'P1_pre_C1', arm = 'claude_session') =>
  join(archive, 'results', 'probes_at_crosscompaction', ARCHIVE_TARGET, position, arm);
const importArgs = (archive: string, db: string) => ['persona', 'import', '--layout', 'contextecho', archive, '--db', db, '--judge', 'j'];
const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at |internal error/u);

/** A content-position archive with one condition whose name is chosen by the test. */
function contentPositionArchive(dir: string, condition: string, extra: Record<string, unknown> = {}): string {
  const archive = join(dir, 'archive');
  mkdirSync(archive);
  const results = ['C01', 'C02', 'C03'].map((id, i) => ({
    probe_id: id,
    score: i,
    category: 'coding_self',
    probe_text: `q ${id}`,
    response_full: `r ${id}`,
    ...extra,
  }));
  writeFileSync(join(archive, 'CONTENT_POSITION_t.json'), JSON.stringify({ target: 't', full_results: { [condition]: { results }, scratch: { results } } }));
  return archive;
}

describe('persona import / export: confinement', { timeout: 300_000 }, () => {
  it('a condition, target or probe id of ".." or a reserved name is refused naming the file and field; nothing is written above the export folder', async () => {
    for (const [condition, field] of [
      ['..', 'arm'],
      ['NUL', 'arm'],
    ] as const) {
      const dir = fresh();
      const r = await runCliInProcess(importArgs(contentPositionArchive(dir, condition), join(dir, 'p.db')));
      expect(r.code).toBe(2);
      expect(r.stderr).toContain('CONTENT_POSITION_t.json');
      expect(r.stderr).toContain(field);
      noStack(r.stderr);
    }
    // A probe id of ".." in the authors' per-cell layout.
    const dir = fresh();
    const archive = join(dir, 'archive');
    writeContextEchoArchive(archive);
    const target = join(archive, 'CONTENT_POSITION_x.json');
    writeFileSync(
      target,
      JSON.stringify({
        target: '..',
        full_results: { scratch: { results: [{ probe_id: '..', score: 1, category: 'c', probe_text: 'q', response_full: 'r' }] } },
      }),
    );
    const r = await runCliInProcess(importArgs(archive, join(dir, 'p.db')));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/CONTENT_POSITION_x\.json.*(target|probe_id)/su);
    noStack(r.stderr);
  });

  it('writeArchiveFiles refuses "..", absolute paths, NUL and reserved names, naming the path; nothing lands outside', () => {
    const dir = fresh();
    const out = join(dir, 'out');
    for (const path of ['../escape.json', 'a/../../escape.json', '/tmp/escape.json', 'a/\u0000.json', 'a/CON.json', 'results/../../x.json']) {
      const error = thrownBy(() => writeArchiveFiles(out, [{ path, value: { x: 1 } }]), InputError);
      expect(error.file).toBe(path);
      expect(error.field).toBe('path');
    }
    expect(existsSync(join(dir, 'escape.json'))).toBe(false);
    expect(existsSync(join(dir, 'x.json'))).toBe(false);
    // An output folder whose sub-folder is a symbolic link out of it is not written through.
    mkdirSync(join(dir, 'outside'));
    mkdirSync(join(dir, 'out2'));
    symlinkSync(join(dir, 'outside'), join(dir, 'out2', 'results'));
    thrownBy(() => writeArchiveFiles(join(dir, 'out2'), [{ path: 'results/a.json', value: 1 }]), InputError);
    expect(readdirSync(join(dir, 'outside'))).toEqual([]);
  });

  it('a symbolic link to a file outside the archive is refused without quoting its bytes; a link to / is not walked', async () => {
    const dir = fresh();
    const outside = join(dir, 'outside-secret.txt');
    writeFileSync(outside, 'TOPSECRET-CONTENT not json at all');
    const archive = join(dir, 'archive');
    writeContextEchoArchive(archive);
    symlinkSync(outside, join(cellDir(archive), 'C09.json'));
    const r = await runCliInProcess(importArgs(archive, join(dir, 'p.db')));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/C09\.json.*symbolic link to outside the archive/su);
    expect(r.stderr).not.toContain('TOPSECRET');
    noStack(r.stderr);

    const dir2 = fresh();
    const archive2 = join(dir2, 'archive');
    writeContextEchoArchive(archive2);
    symlinkSync('/', join(archive2, 'results', 'probes_at_crosscompaction', 'root'));
    const r2 = await runCliInProcess(importArgs(archive2, join(dir2, 'p.db')));
    expect(r2.code).toBe(2);
    expect(r2.stderr).toMatch(/root.*symbolic link to outside the archive/su);
    // A link that stays inside the archive is followed as before.
    const dir3 = fresh();
    const archive3 = join(dir3, 'archive');
    writeContextEchoArchive(archive3);
    symlinkSync(join(cellDir(archive3), 'C01.json'), join(dir3, 'unused-link'));
    const r3 = await runCliInProcess(importArgs(archive3, join(dir3, 'p.db')));
    expect(r3.code).toBe(0);
  });

  it('nesting deeper than the limit in label, reason or response_text is exit 2 naming the file (was a RangeError, exit 70)', async () => {
    for (const field of ['label', 'reason', 'response_text']) {
      const dir = fresh();
      const archive = join(dir, 'archive');
      writeContextEchoArchive(archive);
      const file = join(cellDir(archive), 'C02.json');
      const value = JSON.parse(readFileSync(file, 'utf8')) as Record<string, unknown>;
      writeFileSync(file, JSON.stringify({ ...value, [field]: 'X' }).replace('"X"', `${'['.repeat(200_000)}${']'.repeat(200_000)}`));
      const r = await runCliInProcess(importArgs(archive, join(dir, 'p.db')));
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/C02\.json.*nested more than 64 levels/su);
      noStack(r.stderr);
    }
  });

  it('a "__proto__" condition is plain data: it imports, reports and exports (was a TypeError on export, exit 70)', async () => {
    const dir = fresh();
    const db = join(dir, 'p.db');
    const r = await runCliInProcess(importArgs(contentPositionArchive(dir, '__proto__'), db));
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const report = await runCliInProcess(['persona', 'report', db, '--format', 'json', '-o', join(dir, 'r.json')]);
    expect(report.code).toBe(0);
    const exported = await runCliInProcess(['persona', 'export', '--layout', 'contextecho', db, join(dir, 'out')]);
    expect(exported.stderr).toBe('');
    expect(exported.code).toBe(0);
    const text = readFileSync(join(dir, 'out', 'docs', 'CONTENT_POSITION_t.json'), 'utf8');
    expect(Object.keys((JSON.parse(text) as { full_results: object }).full_results)).toContain('__proto__');
    expect(({} as Record<string, unknown>).results).toBeUndefined();
  });
});

describe('persona import: special and huge files (real processes)', { timeout: 300_000 }, () => {
  it('a FIFO named *.json is refused at once (was a hang), naming it', async () => {
    const dir = fresh();
    const archive = join(dir, 'archive');
    writeContextEchoArchive(archive);
    execFileSync('mkfifo', [join(cellDir(archive), 'C07.json')]);
    const r = await spawnMeasured(importArgs(archive, join(dir, 'p.db')));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/C07\.json.*FIFO/su);
    noStack(r.stderr);
  });

  it('a 1 GB cell file is exit 2 naming it and the limit, with peak memory under 300 MB (was 1.18 GB read whole)', async () => {
    const dir = fresh();
    const archive = join(dir, 'archive');
    writeContextEchoArchive(archive);
    const big = join(cellDir(archive), 'C08.json');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 1024 * 1024 * 1024);
    closeSync(fd);
    const r = await spawnMeasured(importArgs(archive, join(dir, 'p.db')));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/C08\.json.*too large: 1024 MiB, over the 64 MiB limit/su);
    expect(r.maxRssMb).toBeLessThan(300);
    noStack(r.stderr);
  });
});
