import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { packageRoot } from './core/version.js';

/**
 * The README's library example, run verbatim as a user would: the code block under "Library API"
 * written to a file in an empty project whose node_modules/echolens is this package (its dist/,
 * so `npm run build` first), run with node, offline (sim: models).
 */

function readmeLibraryExample(): string {
  const readme = readFileSync(join(packageRoot(), 'README.md'), 'utf8');
  const section = readme.slice(readme.indexOf('## Library API'));
  const block = /```(?:js|ts)\n([\s\S]*?)```/u.exec(section);
  if (!block) throw new Error('README.md has no code block under "## Library API"');
  return block[1] as string;
}

describe('the README library example', () => {
  it('runs verbatim, offline, and prints a persona report', () => {
    const root = packageRoot();
    expect(existsSync(join(root, 'dist', 'index.js')), 'run `npm run build` first').toBe(true);
    const project = mkdtempSync(join(tmpdir(), 'echolens-library-'));
    mkdirSync(join(project, 'node_modules'));
    symlinkSync(root, join(project, 'node_modules', 'echolens'), 'dir');
    writeFileSync(join(project, 'package.json'), '{ "type": "module" }\n');
    const example = readmeLibraryExample();
    expect(example).toMatch(/from 'echolens'/u);
    writeFileSync(join(project, 'example.mjs'), example);
    const stdout = execFileSync(process.execPath, ['example.mjs'], {
      cwd: project,
      encoding: 'utf8',
      env: { PATH: process.env.PATH ?? '', HOME: project },
      timeout: 240_000,
    });
    expect(stdout).toMatch(/^# Persona drift \(ContextEcho\)/mu);
    expect(stdout).toMatch(/sim:persona/u);
    expect(existsSync(join(project, 'runs.db'))).toBe(true);
  }, 300_000);
});
