import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import { networkInterfaces } from 'node:os';

/**
 * Who may talk to the viewer. The viewer runs on the user's machine next to
 * their API keys and transcripts, so every request must come from the viewer's
 * own pages: other origins (a web page the user happens to have open) and
 * DNS-rebinding hosts are refused, and anything that calls a model needs the
 * per-process token embedded in the viewer's pages.
 */

export const TOKEN_HEADER = 'x-echolens-token';

export function newToken(): string {
  return randomBytes(32).toString('base64url');
}

export function tokenMatches(expected: string, given: string | undefined): boolean {
  if (given === undefined) return false;
  const a = Buffer.from(expected);
  const b = Buffer.from(given);
  return a.length === b.length && timingSafeEqual(a, b);
}

const LOOPBACK = new Set(['127.0.0.1', 'localhost', '::1', '[::1]']);
const WILDCARD = new Set(['0.0.0.0', '::', '[::]']);

export function isLoopbackHost(host: string): boolean {
  return LOOPBACK.has(host);
}

function hostPart(host: string): string {
  return host.includes(':') && !host.startsWith('[') ? `[${host}]` : host;
}

/** The `host:port` values a legitimate request can carry in its Host header. */
export function allowedHosts(bindHost: string, port: number): Set<string> {
  const names = new Set<string>([hostPart(bindHost)]);
  if (isLoopbackHost(bindHost) || WILDCARD.has(bindHost)) {
    for (const name of ['127.0.0.1', 'localhost', '[::1]']) names.add(name);
  }
  if (WILDCARD.has(bindHost)) {
    for (const list of Object.values(networkInterfaces())) {
      for (const address of list ?? []) names.add(hostPart(address.address));
    }
  }
  return new Set([...names].map((name) => `${name}:${port}`));
}

export type Refusal = { status: 403; reason: string };

/**
 * Origin (when present) must be one of ours; the Host header must always be one
 * of ours (DNS rebinding); a browser that says the request is cross-site is
 * refused except for plain top-level navigations, which cannot read anything.
 */
export function checkOrigin(request: IncomingMessage, hosts: ReadonlySet<string>): Refusal | undefined {
  const host = request.headers.host;
  if (host === undefined || !hosts.has(host.toLowerCase())) return { status: 403, reason: `host ${JSON.stringify(host ?? '')} is not this viewer` };
  const origin = request.headers.origin;
  if (origin !== undefined) {
    const parsed = URL.canParse(origin) ? new URL(origin) : undefined;
    const ours = parsed !== undefined && parsed.protocol === 'http:' && hosts.has(parsed.host.toLowerCase());
    if (!ours) return { status: 403, reason: `origin ${JSON.stringify(origin)} is not this viewer` };
  }
  const site = request.headers['sec-fetch-site'];
  const mode = request.headers['sec-fetch-mode'];
  if (site === 'cross-site' || site === 'same-site') {
    if (!(mode === 'navigate' && request.method === 'GET')) return { status: 403, reason: `a ${site} ${mode ?? ''} request` };
  }
  return undefined;
}

export function styleHash(style: string): string {
  return `'sha256-${createHash('sha256').update(style).digest('base64')}'`;
}

/** Scripts only from the viewer itself (one file, no inline code, no eval); styles by hash; fetches to self. */
export function viewerCsp(style: string): string {
  return [
    "default-src 'none'",
    "script-src 'self'",
    `style-src ${styleHash(style)}`,
    'img-src data:',
    "connect-src 'self'",
    "base-uri 'none'",
    "form-action 'self'",
    "frame-ancestors 'none'",
  ].join('; ');
}

/** Headers every viewer response carries. */
export const COMMON_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
  'x-frame-options': 'DENY',
  'cross-origin-opener-policy': 'same-origin',
  'cross-origin-resource-policy': 'same-origin',
  'cache-control': 'no-store',
});
