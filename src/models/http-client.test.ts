import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { providerFetch } from './http-client.js';

const servers: Server[] = [];

async function serve(handler: (req: IncomingMessage, res: ServerResponse, body: string) => void): Promise<string> {
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => {
      body += chunk;
    });
    req.on('end', () => handler(req, res, body));
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
}

afterEach(async () => {
  vi.unstubAllGlobals();
  vi.unstubAllEnvs();
  await Promise.all(servers.splice(0).map(closeServer));
});

/** Closes a server now, with the connections the client keeps alive or left waiting. */
function closeServer(server: Server): Promise<unknown> {
  const closed = new Promise((resolve) => server.close(resolve));
  server.closeAllConnections();
  return closed;
}

async function rejection(promise: Promise<unknown>): Promise<Error & { cause?: unknown }> {
  try {
    await promise;
  } catch (error) {
    return error as Error;
  }
  throw new Error('expected a rejection');
}

describe('providerFetch', () => {
  it('sends the method, headers and string body, and answers with status, every header and the body', async () => {
    let seen: { method?: string; type?: string; key?: string; body?: string } = {};
    const base = await serve((req, res, body) => {
      seen = { method: req.method, type: req.headers['content-type'], key: req.headers['x-api-key'] as string, body };
      res.setHeader('set-cookie', ['a=1', 'b=2']);
      res.writeHead(201, { 'content-type': 'application/json', 'x-request-id': 'req-7' });
      res.end('{"ok":true,"text":"é"}');
    });
    const response = await providerFetch(`${base}/v1/messages`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-api-key': 'k-1' },
      body: '{"prompt":"ünïcode"}',
    });
    expect(seen).toEqual({ method: 'POST', type: 'application/json', key: 'k-1', body: '{"prompt":"ünïcode"}' });
    expect(response.status).toBe(201);
    expect(response.ok).toBe(true);
    expect(response.headers.get('x-request-id')).toBe('req-7');
    expect(response.headers.getSetCookie()).toEqual(['a=1', 'b=2']);
    expect(await response.json()).toEqual({ ok: true, text: 'é' });
  });

  it('takes headers as a Headers object or pairs too', async () => {
    const keys: string[] = [];
    const base = await serve((req, res) => {
      keys.push(String(req.headers.authorization));
      res.end('{}');
    });
    await providerFetch(base, { headers: new Headers({ authorization: 'Bearer one' }) });
    await providerFetch(new URL(base), { headers: [['authorization', 'Bearer two']] });
    expect(keys).toEqual(['Bearer one', 'Bearer two']);
  });

  it('an error status keeps its body for the SDK to read', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(429, { 'content-type': 'application/json', 'retry-after': '3' });
      res.end('{"error":{"type":"rate_limit_error"}}');
    });
    const response = await providerFetch(base, { method: 'POST', body: '{}' });
    expect(response.status).toBe(429);
    expect(response.statusText).toBe('Too Many Requests');
    expect(response.headers.get('retry-after')).toBe('3');
    expect(await response.text()).toContain('rate_limit_error');
  });

  it('a 204 answer has no body', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(204);
      res.end();
    });
    const response = await providerFetch(base, { method: 'DELETE' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('refuses a redirect without following it, as fetch fails (TypeError, cause "unexpected redirect")', async () => {
    let followed = 0;
    const target = await serve((_req, res) => {
      followed += 1;
      res.end('{}');
    });
    const base = await serve((_req, res) => {
      res.writeHead(308, { location: `${target}/elsewhere` });
      res.end();
    });
    const error = await rejection(providerFetch(base, { method: 'POST', body: '{}' }));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('fetch failed');
    expect((error.cause as Error).message).toBe('unexpected redirect');
    expect(followed).toBe(0);
  });

  it('a refused connection fails as fetch does, with the network cause and its code', async () => {
    const base = await serve((_req, res) => res.end());
    await Promise.all(servers.splice(0).map(closeServer));
    const error = await rejection(providerFetch(base, { method: 'POST', body: '{}' }));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('fetch failed');
    expect((error.cause as { code?: string }).code).toBe('ECONNREFUSED');
  });

  it('an aborted call rejects with the signal reason, before or during the call', async () => {
    const base = await serve(() => {
      // never answers
    });
    const before = new AbortController();
    before.abort(new Error('cancelled first'));
    expect((await rejection(providerFetch(base, { signal: before.signal }))).message).toBe('cancelled first');

    const during = new AbortController();
    const call = providerFetch(base, { method: 'POST', body: '{}', signal: during.signal });
    setTimeout(() => during.abort(new Error('timeout')), 50);
    expect((await rejection(call)).message).toBe('timeout');

    const plain = new AbortController();
    const unnamed = providerFetch(base, { signal: plain.signal });
    setTimeout(() => plain.abort(), 50);
    expect((await rejection(unnamed)).name).toBe('AbortError');
  });

  it('a body cut off mid-way fails (terminated), not a short answer', async () => {
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json', 'content-length': '1000' });
      res.write('{"partial":');
      setTimeout(() => res.destroy(), 20);
    });
    const error = await rejection(providerFetch(base, { method: 'POST', body: '{}' }));
    expect(error).toBeInstanceOf(TypeError);
    expect(error.message).toBe('terminated');
  });

  it('an event stream arrives as it is written, before the server ends it', async () => {
    let finish: () => void = () => {};
    const base = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('data: first\n\n');
      finish = () => res.end('data: last\n\n');
    });
    const response = await providerFetch(base, { method: 'POST', body: '{}' });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    const first = await reader.read();
    expect(decoder.decode(first.value)).toBe('data: first\n\n');
    finish();
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += decoder.decode(part.value);
    expect(rest).toBe('data: last\n\n');
  });

  it('leaves to the global fetch what it does not handle: proxies, non-string bodies, Request objects', async () => {
    const global = vi.fn(async () => new Response('from global fetch'));
    vi.stubGlobal('fetch', global);
    const base = await serve((_req, res) => res.end('direct'));

    expect(await (await providerFetch(base, { method: 'POST', body: '{}' })).text()).toBe('direct');
    expect(global).not.toHaveBeenCalled();

    expect(await (await providerFetch(base, { method: 'POST', body: new URLSearchParams({ a: '1' }) })).text()).toBe('from global fetch');
    expect(await (await providerFetch(new Request(base))).text()).toBe('from global fetch');
    vi.stubEnv('HTTPS_PROXY', 'http://proxy.invalid:3128');
    expect(await (await providerFetch(base, { method: 'POST', body: '{}' })).text()).toBe('from global fetch');
    expect(global).toHaveBeenCalledTimes(3);
  });
});
