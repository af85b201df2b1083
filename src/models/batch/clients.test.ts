import { existsSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { dirname } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { createBatchClient } from './clients.js';

// Issue 44: batch input is written to a file line by line and uploaded from it; results are read as a stream.

let server: Server | undefined;
afterEach(async () => {
  await new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve()));
  server = undefined;
});

/** A server answering every request with `handler`; resolves to its `/v1` base URL. */
async function serve(handler: Parameters<typeof createServer>[1]): Promise<string> {
  server = createServer(handler);
  await new Promise<void>((resolve) => server!.listen(0, '127.0.0.1', () => resolve()));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
}

describe('batch results read as a stream', () => {
  it('parses lines cut across chunks (a multi-byte character included) and notes the unparseable one by its line number', async () => {
    const lines = [
      JSON.stringify({ custom_id: 'a', result: { type: 'succeeded', message: { content: [{ type: 'text', text: 'é€ answer' }] } } }),
      '{"custom_id":"b","result":{"type":"succ',
      JSON.stringify({ custom_id: 'c', result: { type: 'expired' } }),
    ];
    const body = Buffer.from(`${lines.join('\n')}\n`);
    const baseURL = await serve((req, res) => {
      if (req.url?.endsWith('/results')) {
        res.writeHead(200, { 'content-type': 'application/x-jsonl' });
        // Seven-byte chunks: lines and the two-byte é / three-byte € are split between writes.
        let at = 0;
        const next = () => {
          if (at >= body.length) return void res.end();
          res.write(body.subarray(at, at + 7), () => setImmediate(next));
          at += 7;
        };
        next();
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ id: 'msgbatch_1', processing_status: 'ended', results_url: `${baseURL}/messages/batches/msgbatch_1/results` }));
    });
    const client = createBatchClient({ provider: 'anthropic', baseURL, apiKey: 'k', modelId: 'm' });
    const results = await client.results('msgbatch_1');
    expect(results.lines.map((l) => [l.customId, l.kind])).toEqual([
      ['a', 'succeeded'],
      ['c', 'expired'],
    ]);
    expect(JSON.stringify(results.lines[0])).toContain('é€ answer');
    expect(results.invalid).toEqual([{ source: 'results of msgbatch_1', line: 2, customId: 'b' }]);
  });
});

describe('batch input files', () => {
  for (const provider of ['openai', 'anthropic'] as const) {
    it(`${provider}: the lines reach the provider as written, and the temporary file is gone after submit`, async () => {
      const received: string[] = [];
      const baseURL = await serve(async (req, res) => {
        const chunks: Buffer[] = [];
        for await (const chunk of req) chunks.push(chunk as Buffer);
        const raw = Buffer.concat(chunks);
        if (req.url === '/v1/files') {
          const form = await new Request('http://x/', { method: 'POST', headers: { 'content-type': req.headers['content-type']! }, body: raw }).formData();
          received.push(await (form.get('file') as Blob).text());
          res.end(JSON.stringify({ id: 'file-1' }));
        } else if (req.url === '/v1/batches') res.end(JSON.stringify({ id: 'batch_1', status: 'validating' }));
        else {
          received.push(raw.toString('utf8'));
          res.end(JSON.stringify({ id: 'msgbatch_1', processing_status: 'in_progress' }));
        }
      });
      const client = createBatchClient({ provider, baseURL, apiKey: 'k', modelId: 'm' });
      const input = await client.openInput();
      const added = await input.add('cell-1', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'hi' }] }));
      await input.add('cell-2', JSON.stringify({ model: 'm', messages: [{ role: 'user', content: 'ünïcode' }] }));
      expect(added).toBeGreaterThan(40);
      expect(input.lines).toBe(2);
      const dir = dirname(input.path);
      expect(existsSync(input.path)).toBe(true);
      expect(await input.submit()).toEqual({ id: provider === 'openai' ? 'batch_1' : 'msgbatch_1' });
      await input.discard();
      expect(received).toHaveLength(1);
      if (provider === 'openai') {
        const parsed = received[0]!
          .trim()
          .split('\n')
          .map((l) => JSON.parse(l) as { custom_id: string; body: { messages: Array<{ content: string }> } });
        expect(parsed.map((l) => l.custom_id)).toEqual(['cell-1', 'cell-2']);
        expect(parsed[1]!.body.messages[0]!.content).toBe('ünïcode');
      } else {
        const parsed = JSON.parse(received[0]!) as { requests: Array<{ custom_id: string; params: { messages: Array<{ content: string }> } }> };
        expect(parsed.requests.map((r) => r.custom_id)).toEqual(['cell-1', 'cell-2']);
        expect(parsed.requests[1]!.params.messages[0]!.content).toBe('ünïcode');
      }
      expect(existsSync(dir)).toBe(false);
    });
  }
});
