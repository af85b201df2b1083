import { randomBytes } from 'node:crypto';
import { constants, existsSync } from 'node:fs';
import { open, rename, stat, unlink } from 'node:fs/promises';
import { basename, dirname, join, resolve } from 'node:path';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { readLineParts } from './line-reader.js';
import type { TextEncodingName } from './text-encoding.js';
import { type RedactOptions, Redactor } from './redactor.js';

export interface RedactFileOptions extends RedactOptions {
  /** Longest line accepted, in bytes (default 256 MiB; a longer line is an input error). */
  maxLineBytes?: number;
}

/** What a redaction did, per class; holds no path, term or replaced value. */
export interface RedactionReport {
  lines: number;
  jsonLines: number;
  rawLines: number;
  blankLines: number;
  invalidUtf8Lines: number;
  replacements: number;
  /** Replacements per class (`user`, `email`, `secret:openai_key`, …), sorted by class. */
  counts: Record<string, number>;
  /** Distinct terms learned from the file itself, per kind. */
  discovered: { users: number; workspaces: number; hosts: number };
  identityTerms: number;
  /** The input's text encoding (UTF-16/UTF-32 are decoded; the output is always UTF-8). */
  encoding: TextEncodingName;
}

const DEFAULT_MAX_LINE_BYTES = 256 * 1024 * 1024;

export async function requireFile(path: string): Promise<void> {
  const info = await stat(path).catch(() => null);
  if (info === null) throw new InputError('no such file', { file: path });
  if (!info.isFile()) throw new InputError('not a regular file', { file: path });
}

/**
 * Refuses a `.zst` output name: the output is always plain JSONL (echolens reads zstd
 * through fzstd, which only decompresses), and a `.zst` name holding plain text would
 * fail every zstd reader later.
 */
export function assertPlainOutputName(output: string): void {
  if (!/\.zst$/i.test(output)) return;
  const stem = output.slice(0, -'.zst'.length);
  let suggestion = /\.jsonl$/i.test(stem) ? stem : `${stem}.jsonl`;
  // Codex can keep a plain rollout beside the .zst one: never point at a file that exists.
  if (existsSync(suggestion)) suggestion = `${suggestion.replace(/\.jsonl$/i, '')}.redacted.jsonl`;
  throw new InvalidArgumentError(
    'output',
    `"${output}" ends in .zst, but the redacted output is written as plain JSONL (echolens reads zstd, it does not write it); use ${suggestion}`,
  );
}

/** Refuses an output that is the input (same path, symlink or hard link). */
export async function assertDistinctOutput(input: string, output: string): Promise<void> {
  if (resolve(input) === resolve(output)) {
    throw new InvalidArgumentError('output', 'the output must be a new file, not the input (inputs are never modified)');
  }
  const a = await stat(input).catch(() => null);
  const b = await stat(output).catch(() => null);
  if (a !== null && b !== null && a.dev === b.dev && a.ino === b.ino) {
    throw new InvalidArgumentError('output', 'the output is the same file as the input (link); choose a new file');
  }
  if (b?.isDirectory()) throw new InvalidArgumentError('output', 'is a directory; give a file path');
}

async function* wholeLines(path: string, maxLineBytes: number, onEncoding?: (encoding: TextEncodingName) => void) {
  let buffer = '';
  for await (const part of readLineParts(path, undefined, onEncoding)) {
    buffer += part.text;
    if (buffer.length > maxLineBytes) {
      throw new InputError(`line longer than ${maxLineBytes} characters; raise maxLineBytes`, { file: path, line: part.line });
    }
    if (part.end) {
      yield { line: part.line, text: buffer, terminator: part.terminator, invalidUtf8: part.invalidUtf8 };
      buffer = '';
    }
  }
}

/**
 * Redacts a JSONL transcript (or a `.jsonl.zst` one, decompressed while reading) into a
 * new plain JSONL file: the whole input is read once to learn
 * usernames, workspaces and hosts, then every line is redacted and written to a
 * private temp file (mode 0600) that is renamed over `output` only when complete.
 * The input is never modified; line terminators and the line count are preserved.
 */
export async function redactFile(input: string, output: string, options: RedactFileOptions = {}): Promise<RedactionReport> {
  assertPlainOutputName(output);
  await requireFile(input);
  await assertDistinctOutput(input, output);
  const maxLineBytes = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const redactor = new Redactor(options);
  if (options.discover ?? true) {
    for await (const line of wholeLines(input, maxLineBytes)) redactor.learn(line.text);
  }

  const report: RedactionReport = {
    lines: 0,
    jsonLines: 0,
    rawLines: 0,
    blankLines: 0,
    invalidUtf8Lines: 0,
    replacements: 0,
    counts: {},
    discovered: redactor.discoveredCounts(),
    identityTerms: options.identities?.length ?? 0,
    encoding: 'utf-8',
  };
  const temp = join(dirname(resolve(output)), `.${basename(output)}.${process.pid}.${randomBytes(6).toString('hex')}.tmp`);
  const handle = await open(temp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, 0o600);
  let committed = false;
  try {
    let batch: string[] = [];
    let batchSize = 0;
    const drain = async () => {
      if (batch.length === 0) return;
      await handle.write(batch.join(''));
      batch = [];
      batchSize = 0;
    };
    for await (const line of wholeLines(input, maxLineBytes, (encoding) => {
      report.encoding = encoding;
    })) {
      report.lines++;
      if (line.invalidUtf8) report.invalidUtf8Lines++;
      let text = line.text;
      if (text.trim().length === 0) {
        report.blankLines++;
      } else {
        const result = redactor.redactJsonLine(text);
        text = result.text;
        if (result.json) report.jsonLines++;
        else report.rawLines++;
        for (const [cls, count] of Object.entries(result.counts)) {
          report.counts[cls] = (report.counts[cls] ?? 0) + count;
          report.replacements += count;
        }
      }
      batch.push(text, line.terminator);
      batchSize += text.length;
      if (batchSize >= 1 << 20) await drain();
    }
    await drain();
    await handle.sync();
    await handle.close();
    await rename(temp, output);
    committed = true;
  } finally {
    if (!committed) {
      await handle.close().catch(() => undefined);
      await unlink(temp).catch(() => undefined);
    }
  }
  report.counts = Object.fromEntries(Object.entries(report.counts).sort(([a], [b]) => a.localeCompare(b)));
  return report;
}
