// Special files and unusable paths given where a user file is expected (issue #40): a FIFO or a
// device as a config, a transcript or a store; a --db under a file, in /proc or /sys, or in a folder
// that cannot be written. Each is exit 2 at once naming the path and the reason (no hang, no stack).
import { execFileSync } from 'node:child_process';
import { chmodSync, closeSync, ftruncateSync, mkdirSync, mkdtempSync, openSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runCliInProcess } from '../../src/cli/testing/run-cli.js';
import { writeContextEchoArchive } from '../../src/persona-drift/testing/contextecho-archive.js';
import { spawnMeasured } from './measured.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-hostile-files-'));
const noStack = (stderr: string) => expect(stderr).not.toMatch(/\n\s+at |internal error/u);
const archive = join(dir, 'archive');
writeContextEchoArchive(archive);
const importInto = (db: string) => runCliInProcess(['persona', 'import', '--layout', 'contextecho', archive, '--db', db]);

describe('FIFOs and devices where a file is read (real processes)', { timeout: 300_000 }, () => {
  const fifo = join(dir, 'pipe.yaml');
  execFileSync('mkfifo', [fifo]);
  const transcript = join(dir, 'pipe.jsonl');
  execFileSync('mkfifo', [transcript]);

  it('a FIFO or /dev/zero as a config is refused at once, naming it (was a hang)', async () => {
    for (const config of [fifo, '/dev/zero']) {
      const r = await spawnMeasured(['persona', 'run', config, '--dry-run']);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(config);
      expect(r.stderr).toMatch(/FIFO|character device/u);
      noStack(r.stderr);
    }
  });

  it('a FIFO given to sessions inspect is refused at once (was a hang); so is a device', async () => {
    for (const file of [transcript, '/dev/zero']) {
      const r = await spawnMeasured(['sessions', 'inspect', file]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/not a regular file/u);
      expect(r.stderr).toContain(file);
      noStack(r.stderr);
    }
  });

  it('a 1 GB config is refused by its size before it is read (peak memory under 300 MB)', async () => {
    const big = join(dir, 'big.yaml');
    const fd = openSync(big, 'w');
    ftruncateSync(fd, 1024 * 1024 * 1024);
    closeSync(fd);
    const r = await spawnMeasured(['persona', 'run', big, '--dry-run']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/big\.yaml.*too large: 1024 MiB, over the 16 MiB limit for a config/su);
    expect(r.maxRssMb).toBeLessThan(300);
  });
});

describe('unusable --db paths', { timeout: 120_000 }, () => {
  const plain = join(dir, 'plain-file');
  writeFileSync(plain, 'x');
  const cases: Array<[string, RegExp]> = [
    [join(plain, 'x.db'), /plain-file is a file, not a folder/u],
    [join(plain, 'a', 'b', 'x.db'), /plain-file is a file, not a folder/u],
    ['/proc/self/x.db', /kernel's proc file system/u],
    ['/proc/self/status', /kernel's proc file system/u],
    ['/sys/kernel/x.db', /sysfs|read-only|not writable/u],
    ['/dev/null', /character device, not a regular file/u],
    [dir, /a directory, not a regular file/u],
  ];
  for (const [db, reason] of cases) {
    it(`--db ${db.replace(dir, '<tmp>')} is exit 2 with the reason (was exit 70 or no output)`, async () => {
      const r = await importInto(db);
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(db);
      expect(r.stderr).toMatch(reason);
      noStack(r.stderr);
    });
  }

  it('a FIFO as --db is refused, for writers and readers', async () => {
    const fifo = join(dir, 'store.fifo');
    execFileSync('mkfifo', [fifo]);
    for (const r of [await importInto(fifo), await runCliInProcess(['runs', 'list', fifo])]) {
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/FIFO \(named pipe\), not a regular file/u);
    }
  });

  it.skipIf(process.getuid?.() === 0)('a read-only folder is named as such (skipped as root: root writes anywhere)', async () => {
    const folder = join(dir, 'read-only');
    mkdirSync(folder);
    chmodSync(folder, 0o555);
    const r = await importInto(join(folder, 'x.db'));
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/read-only or not writable/u);
  });
});
