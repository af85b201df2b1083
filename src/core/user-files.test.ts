import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError } from './errors.js';
import { thrownBy } from './testing/thrown.js';
import { badPathSegment, confinedEntry, jsonTextTooDeep, parseUserJson, readUserText, resolveInside, valueTooDeep } from './user-files.js';

const dir = mkdtempSync(join(tmpdir(), 'echolens-user-files-'));

describe('user files', () => {
  it('reads a regular file; refuses a FIFO and a device at once, and a file over the cap before reading it', () => {
    writeFileSync(join(dir, 'a.txt'), 'hello');
    expect(readUserText(join(dir, 'a.txt'))).toBe('hello');
    execFileSync('mkfifo', [join(dir, 'p.json')]);
    expect(thrownBy(() => readUserText(join(dir, 'p.json'), { file: 'p.json' }), InputError).message).toMatch(
      /^p\.json: a FIFO \(named pipe\), not a regular file/u,
    );
    expect(thrownBy(() => readUserText('/dev/zero'), InputError).message).toMatch(/character device/u);
    writeFileSync(join(dir, 'big.txt'), 'x'.repeat(2000));
    expect(thrownBy(() => readUserText(join(dir, 'big.txt'), { maxBytes: 1000, what: 'a test file' }), InputError).message).toMatch(
      /too large: 2000 bytes, over the 1000 bytes limit for a test file/u,
    );
  });

  it('measures JSON depth without recursion and never quotes the text in a parse error', () => {
    expect(jsonTextTooDeep('{"a":"[[[[[[[["}', 3)).toBeUndefined();
    expect(jsonTextTooDeep('[[[[1]]]]', 3)).toEqual({ depth: 4, offset: 3 });
    expect(jsonTextTooDeep(`${'['.repeat(1e6)}${']'.repeat(1e6)}`)?.depth).toBe(65);
    expect(valueTooDeep({ a: { b: [[1]] } }, 3)).toBe('a.b[0]');
    const error = thrownBy(() => parseUserJson('SECRET-BYTES not json', { file: 'f.json' }), InputError);
    expect(error.message).not.toContain('SECRET');
    expect(error.field).toBe('(root)');
  });

  it('refuses unsafe path parts and paths that leave their root', () => {
    for (const bad of ['..', '.', '', 'a/b', 'a\\b', 'x\u0000y', 'CON', 'nul.json', 'com1', 'x.', 'x ']) expect(badPathSegment(bad)).toBeDefined();
    for (const good of ['claude-haiku-4-5', 'P1_pre_C1', '__proto__', 'C01.json', '...x']) expect(badPathSegment(good)).toBeUndefined();
    expect(resolveInside(dir, 'a/b.json')).toBe(join(dir, 'a', 'b.json'));
    for (const bad of ['../x', '/etc/passwd', 'a/../../x', 'C:/x']) expect(thrownBy(() => resolveInside(dir, bad), InputError).field).toBe('path');
  });

  it('follows a symbolic link only inside its root', () => {
    const root = join(dir, 'root');
    mkdirSync(join(root, 'sub'), { recursive: true });
    writeFileSync(join(root, 'sub', 'in.json'), '{}');
    symlinkSync(join(root, 'sub', 'in.json'), join(root, 'inside-link'));
    symlinkSync('/', join(root, 'out-link'));
    expect(confinedEntry(root, join(root, 'inside-link'))).toBe('file');
    expect(confinedEntry(root, join(root, 'sub'))).toBe('directory');
    expect(thrownBy(() => confinedEntry(root, join(root, 'out-link')), InputError).message).toMatch(/symbolic link to outside/u);
  });
});
