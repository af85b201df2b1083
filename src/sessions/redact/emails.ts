import { type ClassCounts, type Piece, applyPass, placeholder } from './pieces.js';

// File extensions that look like TLDs in `icon@2x.png` or `pkg@1.2.3/index.js`. Extensions that are
// also country domains (.pl Poland, .py Paraguay, .rs Serbia, .md Moldova, .sh Saint Helena) are not
// listed: `radek@example.pl` is mail, and verify flags it, so redact must remove it.
const FILE_TLDS = new Set([
  'png',
  'jpg',
  'jpeg',
  'gif',
  'svg',
  'webp',
  'ico',
  'js',
  'mjs',
  'cjs',
  'ts',
  'tsx',
  'jsx',
  'rb',
  'go',
  'java',
  'kt',
  'json',
  'css',
  'scss',
  'html',
  'txt',
  'lock',
  'map',
  'vue',
  'yml',
  'yaml',
  'toml',
  'xml',
  'csv',
  'wasm',
  'node',
  'cpp',
  'hpp',
  'swift',
  'php',
  'lua',
  'zip',
  'gz',
  'tgz',
  'pdf',
]);

// The top-level label: letters, or an internationalised one in its ASCII (punycode) form, `xn--p1ai` (.рф).
const EMAIL =
  /(?<![A-Za-z0-9._%+-])(?<l>[A-Za-z0-9][A-Za-z0-9._%+-]{0,63})(?:@|%40|\\u0040)(?<d>(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?<t>[A-Za-z]{2,24}|xn--[A-Za-z0-9-]{2,59}))(?![A-Za-z0-9-]|\.[A-Za-z0-9])/dg;

/** Email addresses → `<EMAIL>` (`git@host` remotes are handled as hosts, not mail). */
export function redactEmails(input: Piece[], counts: ClassCounts, lower: string): Piece[] {
  if (!lower.includes('@') && !lower.includes('%40') && !lower.includes('\\u0040')) return input;
  return applyPass(input, EMAIL, (match) => {
    const local = match.groups!.l!;
    const tld = match.groups!.t!.toLowerCase();
    if (local === 'git' || FILE_TLDS.has(tld)) return null;
    return [placeholder('<EMAIL>', 'email', counts)];
  });
}
