import { type ClassCounts, type Piece, applyPass, fixed, keep, placeholder } from './pieces.js';

/**
 * Home folders of system and CI accounts: the path prefix is still replaced, but the
 * name is not hunted everywhere ("ubuntu" and "runner" are ordinary words).
 */
export const SYSTEM_ACCOUNTS: ReadonlySet<string> = new Set([
  'user',
  'users',
  'shared',
  'public',
  'default',
  'default user',
  'all users',
  'guest',
  'root',
  'admin',
  'administrator',
  'ubuntu',
  'runner',
  'node',
  'vagrant',
  'ec2-user',
  'debian',
  'centos',
  'fedora',
  'pi',
  'docker',
  'jenkins',
  'circleci',
  'git',
  'www-data',
  'nobody',
  'app',
  'coder',
  'codespace',
  'vscode',
  'gitpod',
  'linuxbrew',
  'travis',
  'buildkite',
  'sandbox',
  'dev',
  'developer',
  'me',
  'you',
  'username',
  'yourname',
  'your-name',
  'your_username',
  'yourusername',
  'name',
  'someone',
  'foo',
  'bar',
  'example',
]);

/** Folders that hold projects: the workspace is the folder inside them. */
const CONTAINER_FOLDERS = new Set([
  'src',
  'code',
  'dev',
  'projects',
  'project',
  'work',
  'repos',
  'repo',
  'git',
  'github',
  'gitlab',
  'workspace',
  'workspaces',
  'developer',
  'documents',
  'desktop',
  'sandbox',
  'sites',
  'dropbox',
  'onedrive',
  'source',
  'sources',
  'personal',
  'clients',
  'go',
  'lab',
  'labs',
  'research',
  'experiments',
  'playground',
  'hack',
  'scratch',
  'tmp',
  'temp',
  'downloads',
]);
/** System folders under a home: never a workspace, and nothing below them is either. */
const SYSTEM_FOLDERS = new Set([
  'library',
  'appdata',
  'application data',
  'bin',
  'lib',
  'local',
  'opt',
  'snap',
  'applications',
  'music',
  'pictures',
  'movies',
  'videos',
  'public',
  'node_modules',
  'miniconda3',
  'anaconda3',
  'miniforge3',
  'venv',
  'env',
  'go',
  'pkg',
  'cache',
  'trash',
  'templates',
  'icloud drive',
  'google drive',
]);

const NAME = '[A-Za-z0-9][A-Za-z0-9._-]{0,63}';
const SEG = String.raw`[^\s/\\"'<>|:*?\`;,()\[\]{}]+`;
// `/Users/x`, `/home/x`, `/var/home/x`, WSL `/mnt/c/Users/x`, with the path that follows.
const POSIX_HOME = new RegExp(`(?<![A-Za-z0-9_.~-])(?<p>(?:/mnt/[a-zA-Z])?(?:/var)?/(?:Users|home))/(?<u>${NAME})(?![A-Za-z0-9._-])(?<r>(?:/${SEG})*/?)`, 'dg');
// `C:\Users\x`, JSON-escaped `C:\\Users\\x`, and `C:/Users/x`; Windows names may hold one space.
const WINDOWS_HOME =
  /(?<![A-Za-z0-9_])(?<p>[A-Za-z]:(?<s>\\+|\/)(?:Users|Documents and Settings)\k<s>)(?<u>[A-Za-z0-9][A-Za-z0-9._-]{0,63}(?: [A-Za-z0-9][A-Za-z0-9._-]{0,63}(?=\\|\/))?)(?![A-Za-z0-9._-])(?<r>(?:(?:\\+|\/)[^\s\\/"'<>|:*?`;,]+)*)/dg;
const TILDE_HOME = /(?<![A-Za-z0-9_~$.-])~(?<u>[A-Za-z_][A-Za-z0-9_.-]{0,31})(?=[/\\])/dg;

/**
 * Whether the backslashes after `~name` (at `at`) are a path separator rather than JSON escaping
 * at some depth: `"~standard\"` and `\\\"~standard\\\"` end in an escaped quote, `~x\n` in an
 * escaped line break; `~alice\\src` (an escaped backslash) is a path.
 */
function tildeSeparator(text: string, at: number): boolean {
  if (text[at] === '/') return true;
  let end = at;
  while (text[end] === '\\') end++;
  const next = text[end] ?? '';
  if (next === '"' || next === "'") return false;
  return !((end - at) % 2 === 1 && 'nrtbfu'.includes(next) && next !== '');
}
// Claude Code project folders: the cwd with every non-alphanumeric character → `-`.
const DASH_HOME = /(?<![A-Za-z0-9])(?<p>(?:[A-Za-z]-)?-(?:mnt-[A-Za-z]-)?(?:var-)?(?:Users|home)-)(?<r>[A-Za-z0-9]+(?:-+[A-Za-z0-9]+)*)/dg;

export interface DiscoveredTerms {
  users: Set<string>;
  workspaces: Set<string>;
  hosts: Set<string>;
}

export function emptyDiscovery(): DiscoveredTerms {
  return { users: new Set(), workspaces: new Set(), hosts: new Set() };
}

function isSystemAccount(name: string): boolean {
  return SYSTEM_ACCOUNTS.has(name.toLowerCase());
}

/** The workspace folder of a path below a home: the first project-like folder. */
function workspaceIndex(segments: readonly string[]): number {
  // Only folders count: a segment followed by another, or a last one without an extension.
  const folders = segments.length > 0 && !/\.[A-Za-z0-9]{1,6}$/.test(segments[segments.length - 1]!) ? segments.length : segments.length - 1;
  for (let i = 0; i < folders && i < 2; i++) {
    const lower = segments[i]!.toLowerCase();
    if (lower.startsWith('.') || SYSTEM_FOLDERS.has(lower)) return -1;
    if (CONTAINER_FOLDERS.has(lower)) continue;
    return segments[i]!.length >= 3 ? i : -1;
  }
  return -1;
}

/** Collects usernames and workspace names from home paths in `text`. */
export function discoverFromPaths(text: string, into: DiscoveredTerms): void {
  const note = (user: string, rest: string, separator: RegExp) => {
    if (!isSystemAccount(user) && user.length >= 2) into.users.add(user);
    const segments = rest.split(separator).filter((s) => s.length > 0);
    const at = workspaceIndex(segments);
    if (at >= 0) into.workspaces.add(segments[at]!);
  };
  for (const match of text.matchAll(POSIX_HOME)) note(match.groups!.u!, match.groups!.r!, /\//);
  for (const match of text.matchAll(WINDOWS_HOME)) note(match.groups!.u!, match.groups!.r!, /\\+|\//);
  for (const match of text.matchAll(TILDE_HOME)) {
    const user = match.groups!.u!;
    if (!tildeSeparator(text, match.index + 1 + user.length)) continue;
    if (!isSystemAccount(user) && user.length >= 2) into.users.add(user);
  }
}

/** `-Users-alice-src-proj`: the username is the first dash-token unless a known name is longer. */
export function discoverFromDashFolders(text: string, into: DiscoveredTerms): void {
  for (const match of text.matchAll(DASH_HOME)) {
    const first = match.groups!.r!.split(/-+/)[0]!;
    if (!isSystemAccount(first) && first.length >= 2 && ![...into.users].some((u) => dashEncode(u).startsWith(first))) {
      into.users.add(first);
    }
  }
}

export function dashEncode(text: string): string {
  return text.replace(/[^A-Za-z0-9]/g, '-');
}

function restPieces(rest: string, separator: RegExp, counts: ClassCounts, workspaces: ReadonlySet<string>): Piece[] {
  const out: Piece[] = [];
  const parts = rest.split(separator);
  const seps = rest.match(separator) ?? [];
  const names = parts.slice(1);
  const at = workspaceIndex(names);
  out.push(keep(parts[0] ?? ''));
  names.forEach((name, i) => {
    out.push(fixed(seps[i] ?? ''));
    if (i === at || workspaces.has(name)) out.push(placeholder('<WORKSPACE>', 'workspace', counts));
    else out.push(keep(name));
  });
  return out.filter((p) => p.text.length > 0);
}

/** Home paths in every OS form → `<USER>`, with the workspace folder → `<WORKSPACE>`. */
export function redactHomePaths(input: Piece[], counts: ClassCounts, known: DiscoveredTerms, lower: string): Piece[] {
  if (!['users', 'home', '~'].some((hint) => lower.includes(hint))) return input;
  let pieces = applyPass(input, POSIX_HOME, (match) => [
    fixed(`${match.groups!.p!}/`),
    placeholder('<USER>', 'user', counts),
    ...restPieces(match.groups!.r!, /\//g, counts, known.workspaces),
  ]);
  pieces = applyPass(pieces, WINDOWS_HOME, (match) => [
    fixed(match.groups!.p!),
    placeholder('<USER>', 'user', counts),
    ...restPieces(match.groups!.r!, /\\+|\//g, counts, known.workspaces),
  ]);
  pieces = applyPass(pieces, TILDE_HOME, (match) =>
    tildeSeparator(match.input, match.index + match[0].length) ? [fixed('~'), placeholder('<USER>', 'user', counts)] : null,
  );
  pieces = applyPass(pieces, DASH_HOME, (match) => {
    const rest = match.groups!.r!;
    const out: Piece[] = [fixed(match.groups!.p!)];
    let user = rest.split(/-+/)[0]!;
    for (const known_ of known.users) {
      const encoded = dashEncode(known_);
      if (encoded.length > user.length && (rest === encoded || rest.startsWith(`${encoded}-`))) user = encoded;
    }
    out.push(placeholder('<USER>', 'user', counts));
    let tail = rest.slice(user.length);
    for (const workspace of [...known.workspaces].sort((a, b) => b.length - a.length)) {
      const encoded = dashEncode(workspace);
      const at = tail.indexOf(`-${encoded}`);
      const after = tail[at + encoded.length + 1];
      if (at >= 0 && (after === undefined || after === '-')) {
        out.push(keep(tail.slice(0, at + 1)), placeholder('<WORKSPACE>', 'workspace', counts));
        tail = tail.slice(at + 1 + encoded.length);
        break;
      }
    }
    if (tail.length > 0) out.push(keep(tail));
    return out;
  });
  return pieces;
}
