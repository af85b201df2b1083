// Holes a held-out reliability campaign found in redaction and verification; each test
// failed before its fix.
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { runCli } from '../../cli/program.js';
import { parseIdentityTerm } from './identity.js';
import { expectBase64BlockRedacted } from './__fixtures__/base64-block.js';
import { redactFile } from './redact-file.js';
import { Redactor } from './redactor.js';
import { scanText } from './verify/scan.js';
import { verifyFile } from './verify/verify-file.js';
import { useTempDir } from '../testing/temp-dir.js';

const tmp = useTempDir('echolens-redact-holes-');

const ANTHROPIC = 'sk-ant-api03-Q7vX2mKp9LwR4tYz8NcB3hJf6Ds1AeGu';
const GITHUB = 'ghp_A1b2C3d4E5f6G7h8I9j0K1l2M3n4O5p6Q7r8';

function transcript(): string {
  const lines = [
    { type: 'user', message: { role: 'user', content: `my key is ${ANTHROPIC} and cwd /Users/zorblax/code/widgetry` } },
    { type: 'assistant', message: { role: 'assistant', content: `export GITHUB_TOKEN=${GITHUB}` } },
  ];
  return `${lines.map((line) => JSON.stringify(line)).join('\r\n')}\r\n`;
}

function encode(text: string, encoding: 'utf-16le' | 'utf-16be' | 'utf-32le' | 'utf-32be', bom: boolean): Buffer {
  const chars = [...text];
  const width = encoding.startsWith('utf-16') ? 2 : 4;
  const le = encoding.endsWith('le');
  const units: number[] = [];
  for (const ch of chars) {
    const cp = ch.codePointAt(0)!;
    if (width === 4) units.push(cp);
    else if (cp > 0xffff) units.push(0xd800 + ((cp - 0x10000) >> 10), 0xdc00 + ((cp - 0x10000) & 0x3ff));
    else units.push(cp);
  }
  if (bom) units.unshift(0xfeff);
  const out = Buffer.alloc(units.length * width);
  units.forEach((unit, i) => {
    if (width === 2) le ? out.writeUInt16LE(unit, i * 2) : out.writeUInt16BE(unit, i * 2);
    else le ? out.writeUInt32LE(unit, i * 4) : out.writeUInt32BE(unit, i * 4);
  });
  return out;
}

describe('UTF-16 and UTF-32 transcripts', () => {
  for (const [encoding, bom] of [
    ['utf-16le', true],
    ['utf-16le', false],
    ['utf-16be', true],
    ['utf-32le', true],
    ['utf-32be', false],
  ] as const) {
    it(`${encoding}${bom ? ' with BOM' : ' without BOM'}: redacted (never passed through), and verify is not fooled`, async () => {
      const input = join(tmp.path, `${encoding}-${bom}.jsonl`);
      await writeFile(input, encode(transcript(), encoding, bom));
      const before = await verifyFile(input);
      expect(before.encoding).toBe(encoding);
      expect(before.clean).toBe(false);
      expect(before.countsByKind.anthropic_key).toBe(1);
      const output = join(tmp.path, `${encoding}-${bom}.out.jsonl`);
      const report = await redactFile(input, output);
      expect(report.encoding).toBe(encoding);
      expect(report.counts['secret:anthropic_key']).toBe(1);
      const text = await readFile(output, 'utf8');
      expect(text).not.toContain(ANTHROPIC);
      expect(text).not.toContain('zorblax');
      expect(text.split('\r\n')).toHaveLength(3);
      for (const line of text.trim().split('\r\n')) expect(() => JSON.parse(line)).not.toThrow();
      expect((await verifyFile(output)).clean).toBe(true);
    });
  }

  it('binary data or an unknown encoding is an input error in redact and verify (exit 2), never "clean"', async () => {
    const input = join(tmp.path, 'binary.jsonl');
    const bytes = randomBytes(5000);
    bytes[10] = 0;
    bytes[500] = 0;
    await writeFile(input, bytes);
    await expect(verifyFile(input)).rejects.toThrow(InputError);
    await expect(redactFile(input, join(tmp.path, 'binary.out.jsonl'))).rejects.toThrow(InputError);
    expect(existsSync(join(tmp.path, 'binary.out.jsonl'))).toBe(false);
    expect(await runCli(['node', 'echolens', 'sessions', 'verify', input])).toBe(2);
  });

  it('a UTF-8 file with a NUL byte after the sniffed head is refused, not scanned past', async () => {
    const input = join(tmp.path, 'late-nul.jsonl');
    await writeFile(input, Buffer.concat([Buffer.from(`${'{"a":"b"}\n'.repeat(1000)}`), Buffer.from([0x7b, 0, 0x7d, 0x0a])]));
    await expect(verifyFile(input)).rejects.toThrow(/NUL byte/);
  });
});

describe('identity classes are validated', () => {
  it('a misspelt class or a class written with ":" is an error naming the valid classes', () => {
    expect(() => parseIdentityTerm('employr=Acme Corp')).toThrow(InvalidArgumentError);
    expect(() => parseIdentityTerm('employr=Acme Corp')).toThrow(/did you mean employer.*valid classes: user, name, employer/);
    expect(() => parseIdentityTerm('project:Bluefin')).toThrow(/write project=Bluefin/);
    expect(() => parseIdentityTerm('projet:Bluefin')).toThrow(/write project=Bluefin/);
    expect(parseIdentityTerm('project=Bluefin')).toEqual({ term: 'Bluefin', class: 'project' });
    expect(parseIdentityTerm('company=Acme')).toEqual({ term: 'Acme', class: 'employer' });
    expect(parseIdentityTerm('alice')).toEqual({ term: 'alice', class: 'user' });
  });

  it('the CLI exits 2 on a typo in redact and verify', async () => {
    const input = join(tmp.path, 'plain.jsonl');
    await writeFile(input, `${JSON.stringify({ text: 'Acme Corp and Bluefin' })}\n`);
    expect(await runCli(['node', 'echolens', 'sessions', 'redact', input, '-o', join(tmp.path, 'typo.jsonl'), '--identity', 'employr=Acme Corp'])).toBe(2);
    expect(existsSync(join(tmp.path, 'typo.jsonl'))).toBe(false);
    expect(await runCli(['node', 'echolens', 'sessions', 'verify', input, '--identity', 'project:Bluefin'])).toBe(2);
  });
});

describe('huge strings are scanned linearly', () => {
  it('a base64 image block (512 KB; 8 MB in holes-scale.slow.test.ts) is redacted, and the output verifies clean', async () => {
    await expectBase64BlockRedacted(tmp.path, 512);
  }, 60_000);

  it('a multi-megabyte stretch without whitespace that is not base64 is redacted in place', () => {
    const redactor = new Redactor();
    const minified = `${'a.b,'.repeat(1_000_000)}token=${ANTHROPIC};${'c(d)'.repeat(1_000_000)}`;
    const out = redactor.redactText(minified);
    expect(out.text).not.toContain(ANTHROPIC);
    expect(out.text.length).toBeGreaterThan(7_000_000);
  }, 60_000);
});

describe('secret classes the campaign found missing', () => {
  const hexKey = Buffer.from(ANTHROPIC).toString('hex');
  const cases: Array<{ name: string; text: string; secret: string }> = [
    { name: 'hex-encoded key', text: `stored as ${hexKey} in the vault`, secret: hexKey },
    { name: 'key split by +', text: `const key = "sk-ant-api03-Q7vX2m" + "Kp9LwR4tYz8NcB3hJf6Ds1AeGu";`, secret: 'Kp9LwR4tYz8NcB3hJf6Ds1AeGu' },
    { name: 'key split by + (JSON-escaped quotes)', text: JSON.stringify({ cmd: `k = 'Zq8Lm3Xv' + 'T7nB2pR9wK4' + 'cY6dF1gH5jS0'` }), secret: 'T7nB2pR9wK4' },
    { name: 'JSON password with spaces', text: JSON.stringify({ password: 'correct horse battery staple' }), secret: 'correct horse battery staple' },
    { name: 'password with spaces in code', text: `db.connect(password="purple monkey dishwasher 42")`, secret: 'purple monkey dishwasher' },
    { name: 'Twilio API key', text: 'twilio: SK0123456789abcdef0123456789abcdef', secret: 'SK0123456789abcdef0123456789abcdef' },
  ];
  for (const c of cases) {
    it(`${c.name}: redacted, and verify reports it when left in`, () => {
      const redactor = new Redactor();
      const out = redactor.redactJsonLine(c.text);
      expect(out.text).not.toContain(c.secret);
      expect(scanText(out.text)).toEqual([]);
      expect(scanText(c.text).length).toBeGreaterThan(0);
    });
  }

  it('identity terms inside CamelCase identifiers', () => {
    const redactor = new Redactor({ identities: ['employer=Acme Corp', 'project=Bluefin'] });
    const text = 'class AcmeCorpClient uses newBluefinRunner and ACMECorpAPI; malice and acmecorporate stay';
    const out = redactor.redactText(text).text;
    expect(out).toBe('class <EMPLOYER>Client uses new<PROJECT>Runner and ACMECorpAPI; malice and acmecorporate stay'.replace('ACMECorpAPI', '<EMPLOYER>API'));
    const terms = [
      { term: 'Acme Corp', label: 'employer' },
      { term: 'Bluefin', label: 'project' },
    ];
    expect(scanText(text, terms).map((hit) => hit.kind)).toEqual(['identity:employer', 'identity:project', 'identity:employer']);
    expect(scanText(out, terms)).toEqual([]);
  });

  it('hashes and ordinary hex stay', () => {
    const redactor = new Redactor();
    const sha = 'da39a3ee5e6b4b0d3255bfef95601890afd80709';
    expect(redactor.redactText(`commit ${sha}`).text).toBe(`commit ${sha}`);
    expect(scanText(`commit ${sha}`)).toEqual([]);
  });
});

describe('identity terms and discovery (whole terms, host-like names only)', () => {
  it('a domain term is one term: "com" is never replaced on its own', () => {
    const redactor = new Redactor({ identities: ['employer=acme-corp.com'] });
    const out = redactor.redactText('mail acme-corp.com, clone github.com/acme-corp/x, docs.com').text;
    expect(out).toBe('mail <EMPLOYER>, clone github.com/<EMPLOYER>/x, docs.com');
    expect(scanText('github.com and example.com', [{ term: 'acme-corp.com', label: 'employer' }])).toEqual([]);
  });

  it('"ssh keys" in prose teaches no host; a real ssh destination still does', () => {
    const redactor = new Redactor();
    const text = 'I need ssh keys first. Later: ssh deploy@build-box-07 uptime; the keys are fine on build-box-07';
    redactor.learn(text);
    expect(redactor.discoveredCounts().hosts).toBe(1);
    const out = redactor.redactText(text).text;
    expect(out).toContain('ssh keys first');
    expect(out).toContain('the keys are fine on <HOST>');
    expect(out).not.toContain('build-box-07');
    // A bare alias in command position is still a host.
    expect(new Redactor().redactText('ssh prod').text).toBe('ssh <HOST>');
  });

  it('verify recognises the redactor placeholders: redact → verify is clean on tokens in URLs', async () => {
    const urls = [
      `git remote set-url origin https://${GITHUB}@github.com/acme/tool.git`,
      `git clone https://x-access-token:${GITHUB.replace('ghp_', 'ghs_')}@github.com/o/r.git`,
      'curl https://deploy:Hunter2-Pa55w0rd@ci.example.net/api',
      'GET https://api.example.com/v1/items?api_key=Zk3Jd9Qw2Lm8Xp4Rt7Vb1Nc6&page=2',
      'https://hooks.slack.com/services/T0123ABCD/B0123ABCD/abcdefghijklmnop1234',
      `postgres://admin:s3cr3t-P4ss@10.0.3.7:5432/app?sslmode=require`,
      `wss://stream.example.com/ws?token=${ANTHROPIC}`,
      'https://user:<SECRET:password>@example.com is already redacted',
    ];
    const input = join(tmp.path, 'urls.jsonl');
    const lines = urls.map((url, i) => JSON.stringify({ type: 'assistant', uuid: `u${i}`, message: { content: [{ type: 'text', text: url }] } }));
    await writeFile(input, `${lines.join('\n')}\n`);
    expect((await verifyFile(input)).residualCount).toBeGreaterThanOrEqual(7);
    const output = join(tmp.path, 'urls.out.jsonl');
    await redactFile(input, output);
    const verified = await verifyFile(output);
    expect(verified.residuals).toEqual([]);
    const text = await readFile(output, 'utf8');
    for (const secret of [GITHUB, 'Hunter2-Pa55w0rd', 'Zk3Jd9Qw2Lm8Xp4Rt7Vb1Nc6', 's3cr3t-P4ss', ANTHROPIC]) expect(text).not.toContain(secret);
  });
});
