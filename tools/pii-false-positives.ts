/**
 * False positives of the personal-data detectors per MB of clean input (issue #40; figures in
 * docs/hostile-input.md). Run: `npx tsx tools/pii-false-positives.ts`. Inputs: this repository's
 * src/ without tests and fixtures, the TypeScript compiler (`typescript/lib/_tsc.js`, one 6 MB
 * file), the installed packages the held-out test reads, and the clean redaction fixtures plus
 * the session transcript fixtures. A person's name on a copyright/license line or a handle in a
 * `TODO(…)` annotation is personal data found, counted apart, not a false positive.
 * Two figures per input: the redactor's spans (`pii:<kind>`, what `sessions redact --pii` would
 * replace) and what `sessions verify` would flag (those plus its looser name check, name-check.ts).
 */
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { PII_KINDS } from '../src/sessions/redact/pii.js';
import { loadGivenNames } from '../src/sessions/redact/verify/name-check.js';
import { verifyPiiSpans } from '../src/sessions/redact/verify/verify-file.js';
import { CLEAN_PACKAGES, inAnnotation, isSourceFile, walkFiles as walk } from '../test/reliability/clean-code.js';

const root = new URL('..', import.meta.url).pathname;
const ALL = new Set(PII_KINDS);

const inputs: Array<[string, string[]]> = [
  ['src/ (no tests, fixtures)', walk(join(root, 'src'), isSourceFile)],
  ['typescript/lib/_tsc.js', [join(root, 'node_modules/typescript/lib/_tsc.js')]],
  ['installed packages', CLEAN_PACKAGES.flatMap((p) => walk(join(root, 'node_modules', p), isSourceFile))],
  ['zod message locales (48 languages)', walk(join(root, 'node_modules/zod/v4/locales'), isSourceFile)],
  [
    'transcript and clean fixtures',
    [
      ...walk(join(root, 'src/sessions/redact/__fixtures__/clean'), () => true, /^$/u),
      ...walk(join(root, 'src/sessions'), (n) => n.endsWith('.jsonl'), /^(?:node_modules)$/u),
    ],
  ],
];

const names = await loadGivenNames();
for (const [label, files] of inputs) {
  let bytes = 0;
  const redactHits: string[] = [];
  const verifyHits: string[] = [];
  let apart = 0;
  for (const file of files) {
    const text = readFileSync(file, 'utf8');
    bytes += Buffer.byteLength(text);
    for (const span of verifyPiiSpans(text, ALL, names)) {
      const lineStart = text.lastIndexOf('\n', span.start) + 1;
      const line = text.slice(lineStart, text.indexOf('\n', span.end) >>> 0);
      const annotation = inAnnotation(text, span.start);
      const name = span.kind === 'pii:names' || span.kind === 'pii:names_loose';
      if (name && (annotation || /copyright|licen[cs]e|©/iu.test(line))) {
        if (span.kind === 'pii:names') apart++;
        continue;
      }
      const shown = `  ${file.slice(root.length)}: ${span.kind} ${JSON.stringify(text.slice(span.start, span.end))}`;
      verifyHits.push(shown);
      if (span.kind !== 'pii:names_loose') redactHits.push(shown);
    }
  }
  const mb = bytes / 1024 / 1024;
  console.log(
    `${label}: ${files.length} files, ${mb.toFixed(2)} MB: redact ${redactHits.length} false positives = ${(redactHits.length / mb).toFixed(2)}/MB, ` +
      `verify ${verifyHits.length} = ${(verifyHits.length / mb).toFixed(2)}/MB; ${apart} names on copyright lines or in TODO(…) counted apart`,
  );
  for (const hit of verifyHits.slice(0, 40)) console.log(hit);
}
