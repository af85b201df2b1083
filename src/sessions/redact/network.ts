import { type ClassCounts, type Piece, type ReplacedSpan, applyPass, fixed, keep, placeholder, spliceSpans } from './pieces.js';

/** Public forges: their names identify nobody, so `git@github.com:` stays readable. */
const PUBLIC_HOSTS = new Set([
  'github.com',
  'gitlab.com',
  'bitbucket.org',
  'ssh.dev.azure.com',
  'vs-ssh.visualstudio.com',
  'codeberg.org',
  'huggingface.co',
  'hf.co',
  'git.sr.ht',
  'ssh.github.com',
]);
const NOT_A_HOST = new Set(['localhost', 'host', 'hostname', 'server', 'remote', 'example.com', 'example.org']);

// ssh options that consume the next word.
const SSH_OPTIONS_WITH_ARG = new Set('BbcDEeFIiJLlmOoPpQRSWw'.split(''));

const SSH_COMMAND = /(?<![A-Za-z0-9_/.-])(?:ssh|mosh|sftp|autossh|ssh-copy-id)(?:[ \t]+[^\s;|&"'`\\)]+){1,16}/g;
const SCP_STYLE =
  /(?<![A-Za-z0-9_.+%:/-])(?<u>[A-Za-z0-9][A-Za-z0-9._-]{0,31})@(?<h>\[[0-9a-fA-F:]+\]|[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?(?:\.[A-Za-z0-9](?:[A-Za-z0-9-]*[A-Za-z0-9])?)*):(?=[~/A-Za-z0-9_.])/dg;
const SSH_CONFIG_LINE = /^(?<k>[ \t]*(?:Host|HostName|Hostname|User|Port)[ \t]+)(?<v>[^\s*?!#]+)[ \t]*$/dgm;

const LOCAL_HOST = String.raw`localhost|127\.\d{1,3}\.\d{1,3}\.\d{1,3}|0\.0\.0\.0|\[::1?\]`;
const ONLY_LOCAL_HOST = new RegExp(`^(?:${LOCAL_HOST})$`, 'i');
const PRIVATE_IP = String.raw`10\.\d{1,3}\.\d{1,3}\.\d{1,3}|192\.168\.\d{1,3}\.\d{1,3}|172\.(?:1[6-9]|2\d|3[01])\.\d{1,3}\.\d{1,3}|169\.254\.\d{1,3}\.\d{1,3}|100\.(?:6[4-9]|[7-9]\d|1[01]\d|12[0-7])\.\d{1,3}\.\d{1,3}`;
const PRIVATE_NAME = String.raw`[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:local|internal|lan|corp|home|intranet|localdomain|home\.arpa)`;
const TUNNEL_NAME = String.raw`[A-Za-z0-9-]+(?:\.[A-Za-z0-9-]+)*\.(?:ngrok\.io|ngrok-free\.app|ngrok\.app|ngrok\.dev|trycloudflare\.com|loca\.lt|localhost\.run|serveo\.net|github\.dev|app\.github\.dev|gitpod\.io|csb\.app|webcontainer\.io|devtunnels\.ms)`;

// Dev-server and private URLs: the host (and its port) go, the path stays.
const DEV_URL = new RegExp(
  String.raw`(?<s>\b[A-Za-z][A-Za-z0-9+.-]{1,15}://)(?<h>${LOCAL_HOST}|${PRIVATE_IP}|${TUNNEL_NAME}|${PRIVATE_NAME}|[A-Za-z][A-Za-z0-9-]{1,62}(?=:\d))(?::(?<p>\d{1,5}))?(?![A-Za-z0-9.-])`,
  'dgi',
);
const BARE_HOST_PORT = new RegExp(
  String.raw`(?<![A-Za-z0-9_./:@-])(?<h>${LOCAL_HOST}|${PRIVATE_IP}|${PRIVATE_NAME})(?::(?<p>\d{1,5}))?(?![A-Za-z0-9_.-]|:\d)`,
  'dgi',
);

function isPublicHost(host: string): boolean {
  return PUBLIC_HOSTS.has(host.toLowerCase());
}

function hostPieces(port: string | undefined, counts: ClassCounts): Piece[] {
  const out: Piece[] = [placeholder('<HOST>', 'host', counts)];
  if (port !== undefined) out.push(fixed(':'), placeholder('<PORT>', 'port', counts));
  return out;
}

type Range = { start: number; end: number };
interface SshTarget {
  user?: Range;
  host?: Range;
  ports: Range[];
  users: Range[];
}

/** Finds the destination `[user@]host` and `-p`/`-l` arguments of an ssh-like command. */
function parseSshCommand(command: string): SshTarget {
  const target: SshTarget = { ports: [], users: [] };
  const words = [...command.matchAll(/[^ \t]+/g)];
  let index = 1;
  while (index < words.length) {
    const word = words[index]!;
    const text = word[0];
    const start = word.index;
    if (text.startsWith('-') && text.length >= 2) {
      const letter = text[1]!;
      if (SSH_OPTIONS_WITH_ARG.has(letter)) {
        const inline = text.length > 2 ? { start: start + 2, end: start + text.length } : undefined;
        const next = words[index + 1];
        const arg = inline ?? (next !== undefined ? { start: next.index, end: next.index + next[0].length } : undefined);
        if (arg !== undefined && letter === 'p') target.ports.push(arg);
        if (arg !== undefined && letter === 'l') target.users.push(arg);
        index += inline === undefined ? 2 : 1;
        continue;
      }
      index += 1;
      continue;
    }
    const destination = /^(?:ssh:\/\/)?(?:([^@\s]+)@)?([A-Za-z0-9][A-Za-z0-9.-]*|\[[0-9a-fA-F:]+\])(?::(\d+))?$/.exec(text);
    if (destination !== null) {
      const prefix = text.startsWith('ssh://') ? 6 : 0;
      const user = destination[1];
      const host = destination[2]!;
      if (user !== undefined) target.user = { start: start + prefix, end: start + prefix + user.length };
      const hostStart = start + prefix + (user === undefined ? 0 : user.length + 1);
      target.host = { start: hostStart, end: hostStart + host.length };
      if (destination[3] !== undefined) {
        const portStart = hostStart + host.length + 1;
        target.ports.push({ start: portStart, end: portStart + destination[3].length });
      }
    }
    break;
  }
  return target;
}

/** ssh/scp destinations, ssh_config entries, dev-server URLs and private addresses. */
const has = (lower: string, hints: readonly string[]) => hints.some((hint) => lower.includes(hint));
const BARE_HINTS = [
  'localhost',
  '127.',
  '0.0.0.0',
  '10.',
  '192.168.',
  '172.',
  '169.254.',
  '100.',
  '[::',
  '.local',
  '.internal',
  '.lan',
  '.corp',
  '.home',
  '.intranet',
];

export function redactNetwork(input: Piece[], counts: ClassCounts, lower: string): Piece[] {
  let pieces = input;
  if (has(lower, ['ssh', 'sftp', 'mosh']))
    pieces = applyPass(pieces, SSH_COMMAND, (match) => {
      const command = match[0];
      const target = parseSshCommand(command);
      const spans: ReplacedSpan[] = [];
      if (target.host !== undefined) {
        const host = command.slice(target.host.start, target.host.end);
        const plausible = looksLikeHostName(host, target.user !== undefined) || atCommandPosition(match.input, match.index);
        if (plausible && !isPublicHost(host) && !/^-/.test(host)) spans.push({ ...target.host, text: '<HOST>', cls: 'host' });
      }
      if (target.user !== undefined && command.slice(target.user.start, target.user.end) !== 'git') {
        spans.push({ ...target.user, text: '<USER>', cls: 'user' });
      }
      for (const user of target.users) spans.push({ ...user, text: '<USER>', cls: 'user' });
      for (const port of target.ports) spans.push({ ...port, text: '<PORT>', cls: 'port' });
      return spans.length === 0 ? null : spliceSpans(command, 0, command.length, spans, counts);
    });
  if (lower.includes('@'))
    pieces = applyPass(pieces, SCP_STYLE, (match) => {
      const user = match.groups!.u!;
      const host = match.groups!.h!;
      if (isPublicHost(host)) return null;
      return [user === 'git' ? fixed('git') : placeholder('<USER>', 'user', counts), fixed('@'), placeholder('<HOST>', 'host', counts), fixed(':')];
    });
  if (has(lower, ['host', 'user', 'port']))
    pieces = applyPass(pieces, SSH_CONFIG_LINE, (match) => {
      const key = match.groups!.k!;
      const value = match.groups!.v!;
      const name = key.trim().toLowerCase();
      if (name === 'port' && !/^\d+$/.test(value)) return null;
      if ((name === 'host' || name === 'hostname') && (NOT_A_HOST.has(value.toLowerCase()) || isPublicHost(value))) return null;
      const [text, cls] = name === 'user' ? ['<USER>', 'user'] : name === 'port' ? ['<PORT>', 'port'] : ['<HOST>', 'host'];
      return [keep(key), placeholder(text, cls, counts)];
    });
  if (lower.includes('://')) pieces = applyPass(pieces, DEV_URL, (match) => [fixed(match.groups!.s!), ...hostPieces(match.groups!.p, counts)]);
  if (has(lower, BARE_HINTS))
    pieces = applyPass(pieces, BARE_HOST_PORT, (match) => {
      const host = match.groups!.h!;
      const port = match.groups!.p;
      // Bare `localhost`/`127.0.0.1` without a port identify nobody.
      if (port === undefined && ONLY_LOCAL_HOST.test(host)) return null;
      return hostPieces(port, counts);
    });
  return pieces;
}

/**
 * A destination that reads as a host name rather than a word: it has a user (`me@box`),
 * a dot, a digit or a dash (`db01`, `build-box`, `prod.example.net`), or is an address.
 */
export function looksLikeHostName(host: string, withUser: boolean): boolean {
  return withUser || /[.\d-]/.test(host) || host.startsWith('[');
}

/**
 * Whether an ssh-like word at `index` starts a command (line start, after a shell
 * prompt or operator, or at the start of a quoted/JSON string), not a word in prose.
 */
function atCommandPosition(text: string, index: number): boolean {
  let at = index - 1;
  while (at >= 0 && (text[at] === ' ' || text[at] === '\t')) at--;
  return at < 0 || '\n\r$#>;&|(`"\'{'.includes(text[at]!);
}

/** Host names a session reaches over ssh; redacted everywhere once found. */
export function discoverHosts(text: string, into: Set<string>): void {
  const commands = new RegExp(SSH_COMMAND.source, 'g');
  for (let match = commands.exec(text); match !== null; match = commands.exec(text)) {
    const target = parseSshCommand(match[0]);
    const host = target.host === undefined ? '' : match[0].slice(target.host.start, target.host.end);
    // Only names that look like hosts are learned: "generate ssh keys" teaches nothing,
    // and a later `ssh` in the same stretch of prose is still looked at.
    if (host !== '' && looksLikeHostName(host, target.user !== undefined)) addHost(host, into);
    else commands.lastIndex = match.index + 3;
  }
  for (const match of text.matchAll(SCP_STYLE)) addHost(match.groups!.h!, into);
  for (const match of text.matchAll(SSH_CONFIG_LINE)) {
    const key = match.groups!.k!.trim().toLowerCase();
    if (key === 'host' || key === 'hostname') addHost(match.groups!.v!, into);
  }
}

function addHost(host: string, into: Set<string>): void {
  const lower = host.toLowerCase();
  if (host.length < 4 || isPublicHost(lower) || NOT_A_HOST.has(lower) || host.startsWith('-')) return;
  if (!ONLY_LOCAL_HOST.test(host)) into.add(host);
}
