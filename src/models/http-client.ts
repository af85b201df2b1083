import { STATUS_CODES } from 'node:http';
import { Readable } from 'node:stream';
import type { Agent, request } from 'undici';

/**
 * The HTTP client of provider calls: a `fetch` with the same contract for what the SDK
 * providers send (a URL, a method, header records and a string body), built on undici's
 * `request`. The global fetch implements the whole WHATWG algorithm per call (request
 * objects, a clone of the body in case of a redirect, web streams both ways), which cost as
 * much CPU and garbage as the rest of a call together; a grid of tens of thousands of calls
 * paid for it in throughput and peak memory (docs/decisions.md#per-call-overhead).
 *
 * - Anything else (a Request object, a stream or form body) goes to the global fetch, and so
 *   does every call while a proxy is configured in the environment: the global fetch is what
 *   a proxy set up for Node (its dispatcher, NODE_USE_ENV_PROXY) applies to.
 * - A network failure rejects like fetch: `TypeError('fetch failed')` with the cause, so the
 *   SDK's and our error classification read it unchanged; an aborted call rejects with the
 *   signal's reason.
 * - Redirects are refused (`unexpected redirect`): provider endpoints answer where they are
 *   asked, and an API key is not sent on to another address.
 * - An event stream is passed on as it arrives; any other body is read whole first.
 */
let client: Promise<{ agent: Agent; request: typeof request }> | undefined;

/** undici, loaded on the first call: a command that makes no call (a report, `--help`) never loads it (issue #44). */
function undiciClient(): Promise<{ agent: Agent; request: typeof request }> {
  client ??= import('undici').then((undici) => ({
    agent: new undici.Agent({ keepAliveTimeout: 30_000, keepAliveMaxTimeout: 600_000 }),
    request: undici.request,
  }));
  return client;
}

export const providerFetch: typeof globalThis.fetch = async (input, init = {}) => {
  const url = typeof input === 'string' ? input : input instanceof URL ? input.href : undefined;
  if (url === undefined || (init.body != null && typeof init.body !== 'string') || proxyConfigured()) return globalThis.fetch(input, init);
  const signal = init.signal ?? undefined;
  if (signal?.aborted) throw abortReason(signal);
  const { agent, request } = await undiciClient();
  if (signal?.aborted) throw abortReason(signal);
  let response: Awaited<ReturnType<typeof request>>;
  try {
    response = await request(url, {
      method: (init.method ?? 'GET') as 'GET',
      headers: headerRecord(init.headers),
      body: typeof init.body === 'string' ? init.body : null,
      signal,
      dispatcher: agent,
    });
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    throw new TypeError('fetch failed', { cause: error });
  }
  const { statusCode } = response;
  if (statusCode >= 300 && statusCode < 400 && statusCode !== 304) {
    await response.body.dump();
    throw new TypeError('fetch failed', { cause: new Error('unexpected redirect') });
  }
  const headers = new Headers();
  for (const [name, value] of Object.entries(response.headers)) {
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else if (value !== undefined) headers.set(name, value);
  }
  const answer = { status: statusCode, statusText: STATUS_CODES[statusCode] ?? '', headers };
  if (statusCode === 204 || statusCode === 205 || statusCode === 304 || init.method === 'HEAD') {
    await response.body.dump();
    return new Response(null, answer);
  }
  if (headers.get('content-type')?.includes('text/event-stream')) {
    return new Response(Readable.toWeb(response.body) as ReadableStream<Uint8Array>, answer);
  }
  let body: ArrayBuffer;
  try {
    body = await response.body.arrayBuffer();
  } catch (error) {
    if (signal?.aborted) throw abortReason(signal);
    throw new TypeError('terminated', { cause: error });
  }
  return new Response(body, answer);
};

const PROXY_VARIABLES = ['HTTPS_PROXY', 'https_proxy', 'HTTP_PROXY', 'http_proxy'] as const;

function proxyConfigured(): boolean {
  return PROXY_VARIABLES.some((name) => (process.env[name] ?? '') !== '');
}

function abortReason(signal: AbortSignal): unknown {
  return signal.reason ?? new DOMException('This operation was aborted', 'AbortError');
}

/** Header records as undici takes them (the providers pass plain records; other forms are converted). */
function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  if (headers === undefined) return {};
  if (headers instanceof Headers || Array.isArray(headers)) return Object.fromEntries(new Headers(headers).entries());
  const record: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers as Record<string, string | undefined>)) if (value !== undefined) record[name] = value;
  return record;
}
