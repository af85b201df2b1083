import { type IdentityTerm, normalizeIdentities } from '../identity.js';
import { readLineParts } from '../line-reader.js';
import { requireFile } from '../redact-file.js';
import type { TextEncodingName } from '../text-encoding.js';
import type { Hit } from './detectors.js';
import type { VerifyTerm } from './identity-check.js';
import { createValueHasher, maskedPreview } from './mask.js';
import { findPii, type PiiKind } from '../pii.js';
import { findLooseNames, type GivenNames, loadGivenNames } from './name-check.js';
import { type FoundHit, scanText, unescapeJsonText } from './scan.js';

/**
 * Personal data left in the JSON strings of a window (each string is read as its text, so a
 * name in a message is seen as prose, not as part of a JSON line). Spans are in window offsets.
 */
function piiHits(windowText: string, kinds: ReadonlySet<PiiKind>, names: GivenNames | undefined): FoundHit[] {
  if (kinds.size === 0) return [];
  const scan = (text: string, base: number, length: number) =>
    verifyPiiSpans(text, kinds, names).map((span) => ({ kind: span.kind, start: base, end: base + length, value: text.slice(span.start, span.end) }));
  const strings = [...windowText.matchAll(/"((?:[^"\\]|\\.)*)"/gu)];
  // A line that is not JSON is scanned as text.
  if (strings.length === 0) return scan(windowText, 0, windowText.length);
  return strings.flatMap((m) => scan(unescapeJsonText(m[1]!), m.index, m[0].length));
}

/**
 * Personal data verify reports in a text: what the redactor's detectors find (`pii:<kind>`), and,
 * when names are asked for, the verifier's own looser name check (`pii:names_loose`, name-check.ts)
 * where those found nothing.
 */
export function verifyPiiSpans(text: string, kinds: ReadonlySet<PiiKind>, names: GivenNames | undefined): Hit[] {
  const found = findPii(text, kinds).map((span) => ({ ...span, kind: `pii:${span.kind}` }));
  if (names === undefined || !kinds.has('names')) return found;
  const loose = findLooseNames(text, names).filter((hit) => !found.some((f) => f.start < hit.end && hit.start < f.end));
  return [...found, ...loose.map((hit) => ({ kind: 'pii:names_loose', ...hit }))];
}

export interface VerifyOptions {
  /** Identity terms that must not appear (`class=term` or `IdentityTerm`). */
  identities?: readonly (IdentityTerm | string)[];
  /** Characters scanned at once; longer lines are scanned in overlapping windows. */
  windowChars?: number;
  /** Overlap between windows (longest residual guaranteed to be seen whole). */
  overlapChars?: number;
  /** Residuals listed in full (all are counted). */
  maxListed?: number;
  /** Key for the short hashes (default: random per run, so hashes mean nothing across runs). */
  hashKey?: string;
  /** Kinds of personal data reported when found (pii.ts); default none here, all from the CLI. */
  pii?: Iterable<PiiKind>;
}

/** One leftover value; never carries the value itself. */
export interface Residual {
  kind: string;
  file: string;
  line: number;
  /** e.g. `sk-…(51 chars)`. */
  preview: string;
  /** Keyed hash (10 hex): equal values get equal hashes within one report. */
  hash: string;
}

export interface VerifyReport {
  file: string;
  clean: boolean;
  lines: number;
  residualCount: number;
  countsByKind: Record<string, number>;
  residuals: Residual[];
  /** True when more residuals exist than are listed. */
  truncated: boolean;
  /** The file's text encoding (UTF-16/UTF-32 are decoded before scanning). */
  encoding: TextEncodingName;
}

const DEFAULT_WINDOW = 4 * 1024 * 1024;
const DEFAULT_OVERLAP = 64 * 1024;

/**
 * Re-scans a redacted file with the verifier's own detectors. Every line is scanned
 * in full: a long line is read in overlapping windows, never cut.
 */
export async function verifyFile(file: string, options: VerifyOptions = {}): Promise<VerifyReport> {
  await requireFile(file);
  const windowChars = options.windowChars ?? DEFAULT_WINDOW;
  const overlap = Math.min(options.overlapChars ?? DEFAULT_OVERLAP, Math.floor(windowChars / 2));
  const maxListed = options.maxListed ?? 1000;
  const hash = createValueHasher(options.hashKey);
  const piiKinds: ReadonlySet<PiiKind> = new Set(options.pii ?? []);
  const givenNames = piiKinds.has('names') ? await loadGivenNames() : undefined;
  const terms: VerifyTerm[] = normalizeIdentities(options.identities).map((t) => ({ term: t.term, label: t.class }));

  const report: VerifyReport = {
    file,
    clean: true,
    lines: 0,
    residualCount: 0,
    countsByKind: {},
    residuals: [],
    truncated: false,
    encoding: 'utf-8',
  };
  let carry = '';
  let seen = new Set<string>();
  const record = (kind: string, line: number, value: string) => {
    const digest = hash(value);
    const key = `${kind}\u0000${digest}`;
    if (seen.has(key)) return;
    seen.add(key);
    report.residualCount++;
    report.countsByKind[kind] = (report.countsByKind[kind] ?? 0) + 1;
    if (report.residuals.length < maxListed) {
      report.residuals.push({ kind, file, line, preview: maskedPreview(kind, value), hash: digest });
    } else report.truncated = true;
  };

  let buffer = '';
  const onEncoding = (encoding: TextEncodingName) => {
    report.encoding = encoding;
  };
  for await (const part of readLineParts(file, Math.max(1024, windowChars - overlap), onEncoding)) {
    buffer += part.text;
    while (buffer.length - carry.length >= windowChars - overlap || (part.end && buffer.length > 0)) {
      const windowText = buffer.slice(0, windowChars);
      const lineEnded = part.end && windowText.length === buffer.length;
      for (const hit of [...scanText(windowText, terms), ...piiHits(windowText, piiKinds, givenNames)]) {
        // A hit touching the window's end is seen whole in the next window.
        if (!lineEnded && hit.end >= windowText.length && hit.start > 0) continue;
        // A hit that ended inside the carried overlap was recorded by the previous window.
        if (hit.end < carry.length) continue;
        record(hit.kind, part.line, hit.value);
      }
      if (lineEnded) {
        buffer = '';
        carry = '';
        break;
      }
      const keepFrom = Math.max(0, windowText.length - overlap);
      carry = windowText.slice(keepFrom);
      buffer = carry + buffer.slice(windowText.length);
    }
    if (part.end) {
      report.lines++;
      buffer = '';
      carry = '';
      seen = new Set();
    }
  }
  report.clean = report.residualCount === 0;
  report.countsByKind = Object.fromEntries(Object.entries(report.countsByKind).sort(([a], [b]) => a.localeCompare(b)));
  return report;
}
