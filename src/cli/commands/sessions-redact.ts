import { readFile, writeFile } from 'node:fs/promises';
import type { Command } from 'commander';
import { InputError, InvalidArgumentError } from '../../core/errors.js';
import { parseIdentityTerm } from '../../sessions/redact/identity.js';
import { PII_KINDS, type PiiKind, parsePiiKinds } from '../../sessions/redact/pii-kinds.js';
import { parseQuoteFile } from '../../sessions/redact/quotes.js';
import type { RedactionReport } from '../../sessions/redact/redact-file.js';
import type { VerifyReport } from '../../sessions/redact/verify/verify-file.js';

const PII_HELP = `personal data to replace / report: all (default), none, or a comma list of ${PII_KINDS.join(', ')}`;

function piiKinds(value: string): Set<PiiKind> {
  try {
    return parsePiiKinds(value);
  } catch (error) {
    throw new InvalidArgumentError('--pii', (error as Error).message);
  }
}

function collect(value: string, previous: string[]): string[] {
  return [...previous, value];
}

/** Terms from `--identity` and from `--identity-file` (one `class=term` per line, `#` comments). */
async function identityTerms(options: IdentityOptions): Promise<string[]> {
  const terms = [...options.identity];
  const file = options.identityFile;
  if (file !== undefined) {
    let content: string;
    try {
      content = await readFile(file, 'utf8');
    } catch {
      throw new InputError('cannot read the identity file', { file });
    }
    content.split(/\r?\n/).forEach((raw, index) => {
      const line = raw.trim();
      if (line.length === 0 || line.startsWith('#')) return;
      try {
        parseIdentityTerm(line);
      } catch (error) {
        throw new InputError(error instanceof Error ? error.message : String(error), { file, line: index + 1 });
      }
      terms.push(line);
    });
  }
  for (const term of terms) parseIdentityTerm(term);
  return terms;
}

function formatCounts(counts: Record<string, number>): string {
  const entries = Object.entries(counts);
  return entries.length === 0 ? 'none' : entries.map(([cls, n]) => `${cls}=${n}`).join(', ');
}

function printRedactSummary(report: RedactionReport, output: string): void {
  const invalid = report.invalidUtf8Lines > 0 ? `, ${report.invalidUtf8Lines} with invalid UTF-8` : '';
  if (report.encoding !== 'utf-8') process.stderr.write(`input decoded from ${report.encoding.toUpperCase()}; the output is UTF-8\n`);
  process.stderr.write(
    `redacted ${report.lines} lines (${report.jsonLines} JSON, ${report.rawLines} raw, ${report.blankLines} blank${invalid}) → ${output}\n` +
      `replacements: ${report.replacements} (${formatCounts(report.counts)})\n` +
      `learned from the file: ${report.discovered.users} usernames, ${report.discovered.workspaces} workspaces, ${report.discovered.hosts} hosts\n` +
      'next: echolens sessions verify <output> --identity … (redaction is best effort; read the output before sharing it)\n',
  );
}

function printVerify(report: VerifyReport): void {
  if (report.encoding !== 'utf-8') process.stdout.write(`decoded from ${report.encoding.toUpperCase()} before scanning\n`);
  for (const residual of report.residuals) {
    process.stdout.write(`${residual.file}:${residual.line}: ${residual.kind} ${residual.preview} #${residual.hash}\n`);
  }
  if (report.truncated) process.stdout.write(`… ${report.residualCount - report.residuals.length} more not listed\n`);
  process.stdout.write(
    report.clean
      ? `clean: ${report.lines} lines scanned, no residuals found\n`
      : `NOT CLEAN: ${report.residualCount} residuals in ${report.lines} lines (${formatCounts(report.countsByKind)})\n`,
  );
}

const REDACT_HELP = `
Placeholders: <USER> usernames, names and home paths · <EMPLOYER> organisation ·
<WORKSPACE> top-level workspace folders · <HOST>:<PORT> ssh hosts, dev servers, private
addresses · <SSH_KEY> ssh keys (public and private) · <EMAIL> · <PROJECT> codenames ·
<REDACTED_QUOTE> passages listed in --quote-file · <SECRET:kind> API keys, tokens,
passwords, private keys, random-looking tokens · <BASE64_DATA> images and other base64.

Identity classes for --identity class=term: user (default), name, employer, workspace,
host, project, email. Terms match case-insensitively on word boundaries; names also in
joined forms (alice.smith, alice_smith, alicesmith, asmith).

The input is never modified; the output is written to a temp file (mode 0600) and
renamed into place. Malformed lines are redacted as raw text and kept.

Compressed input: a Codex .jsonl.zst transcript is decompressed while reading; the
output is always plain JSONL, so -o must not end in .zst (echolens reads zstd, it does
not write it). A corrupt or truncated .zst is an input error and nothing is written.

Exit codes: 0 written, 2 usage or input error.`;

const VERIFY_HELP = `
Re-scans a file with detectors written independently of the redactor (key prefixes,
PEM blocks, credentials in URLs and headers, secret-named assignments, emails, home
paths, dev servers, the identity terms, random-looking tokens, base64 payloads).
Residuals are listed masked: kind, file:line, a preview such as "sk-…(51 chars)" and a
keyed hash (random key per run) — never the value itself. Long lines are scanned in full.
A .zst file is decompressed while reading; a corrupt or truncated one is an input error.

Exit codes: 0 clean, 1 residuals found, 2 usage or input error.`;

/** What both commands take: the identity terms and the personal-data kinds. */
interface IdentityOptions {
  identity: string[];
  identityFile?: string;
  pii: string;
}

interface RedactCliOptions extends IdentityOptions {
  output: string;
  quoteFile?: string;
  report?: string;
  discover: boolean;
}

interface VerifyCliOptions extends IdentityOptions {
  json?: boolean;
}

async function readQuotes(file: string | undefined): Promise<string[]> {
  if (file === undefined) return [];
  try {
    return parseQuoteFile(await readFile(file, 'utf8'));
  } catch {
    throw new InputError('cannot read the quote file', { file });
  }
}

/** `sessions redact` and `sessions verify`, registered on the `sessions` group. */
export function registerSessionsRedact(sessions: Command): void {
  sessions
    .command('redact')
    .description('redact a Claude Code / Codex JSONL transcript into a new file')
    .argument('<in>', 'transcript to redact (.jsonl or .jsonl.zst; malformed lines are kept, redacted as text)')
    .requiredOption('-o, --output <file>', 'new plain .jsonl file to write (never the input, never .zst)')
    .option('--identity <class=term>', 'identity term to redact (repeatable), e.g. employer=Acme', collect, [])
    .option('--identity-file <file>', 'identity terms, one class=term per line (keeps them out of shell history)')
    .option('--quote-file <file>', 'third-party passages to replace with <REDACTED_QUOTE>, separated by --- lines')
    .option('--report <file>', 'write the counts per class as JSON (no values, no terms)')
    .option('--no-discover', 'do not learn usernames, workspaces and hosts from the file itself')
    .option('--pii <kinds>', PII_HELP, 'all')
    .addHelpText('after', REDACT_HELP)
    .action(async (input: string, options: RedactCliOptions) => {
      const identities = await identityTerms(options);
      const quotes = await readQuotes(options.quoteFile);
      // Loaded here: the detectors load an NLP lexicon that `sessions list` and the other session commands never need.
      const { redactFile } = await import('../../sessions/redact/redact-file.js');
      const report = await redactFile(input, options.output, { identities, quotes, discover: options.discover, pii: piiKinds(options.pii) });
      if (options.report !== undefined) {
        await writeFile(options.report, `${JSON.stringify(report, null, 2)}\n`, { mode: 0o600 });
      }
      printRedactSummary(report, options.output);
      process.exitCode = 0;
    });
  sessions
    .command('verify')
    .description('check a redacted file for leftover secrets and identifiers')
    .argument('<file>', 'redacted file to check (.jsonl, or .zst decompressed while reading)')
    .option('--identity <class=term>', 'identity term that must not appear (repeatable)', collect, [])
    .option('--identity-file <file>', 'identity terms, one class=term per line')
    .option('--json', 'print the report as JSON')
    .option('--pii <kinds>', PII_HELP, 'all')
    .addHelpText('after', VERIFY_HELP)
    .action(async (file: string, options: VerifyCliOptions) => {
      const identities = await identityTerms(options);
      const { verifyFile } = await import('../../sessions/redact/verify/verify-file.js');
      const report = await verifyFile(file, { identities, pii: piiKinds(options.pii) });
      if (options.json) process.stdout.write(`${JSON.stringify(report, null, 2)}\n`);
      else printVerify(report);
      process.exitCode = report.clean ? 0 : 1;
    });
}
