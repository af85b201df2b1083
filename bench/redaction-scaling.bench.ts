/**
 * Redaction and verification stay linear on adversarial long lines.
 *
 * Some scanners once walked the rest of a long line again at every match (36 KB of quoted words
 * took 10 s to verify). For each adversarial pattern this times redactText, redactJsonLine and
 * scanText on a short and a 10× longer line and prints the ratio: about 10 is linear, about 100
 * is quadratic. A ratio above 40 fails the benchmark (quadratic gives about 100; noise on a busy machine stays well below 40). BENCH_SMOKE=1 uses smaller lines.
 */
import { redactJsonLine, redactText } from '../src/sessions/redact/redactor.js';
import { scanText } from '../src/sessions/redact/verify/scan.js';

const SMALL = process.env.BENCH_SMOKE ? 8_000 : 40_000;
const PATTERNS: Array<[string, string]> = [
  ['quoted words', `"abc" "def" 'ghi' `],
  ['commands and pipes', 'user alpha | echo x && mysql a:b -pX '],
  ['pgpass-like colons', 'host:5432:db:user '],
  ['escaped line breaks', 'user\\nlogin\\npassword'],
  ['query separators', 'a|b&c&d?e '],
];

function secondsFor(text: string): number {
  let best = Number.POSITIVE_INFINITY;
  for (let round = 0; round < 3; round++) {
    const start = process.hrtime.bigint();
    redactText(text);
    redactJsonLine(JSON.stringify({ content: text }));
    scanText(text);
    best = Math.min(best, Number(process.hrtime.bigint() - start) / 1e9);
  }
  return best;
}

let worst = 0;
console.log(`pattern                 ${SMALL / 1000} KB (s)   ${(10 * SMALL) / 1000} KB (s)   ratio (10 = linear)`);
for (const [name, unit] of PATTERNS) {
  const short = unit.repeat(Math.ceil(SMALL / unit.length));
  const long = unit.repeat(Math.ceil((10 * SMALL) / unit.length));
  const a = secondsFor(short);
  const b = secondsFor(long);
  const ratio = b / a;
  worst = Math.max(worst, ratio);
  console.log(`${name.padEnd(22)}  ${a.toFixed(4).padStart(10)}   ${b.toFixed(4).padStart(10)}   ${ratio.toFixed(1).padStart(6)}`);
}
if (worst > 40) {
  console.log(`a scan grows faster than linearly (worst ratio ${worst.toFixed(1)})`);
  process.exitCode = 1;
}
