import { mkdtempSync } from 'node:fs';
import type { IncomingMessage } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Script } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../../builtin-sims.js';
import { packageRoot } from '../../core/version.js';
import { createAdapter } from '../../models/create-adapter.js';
import { memoryRuns } from '../../testing/audit-runs.js';
import { personaConfigSchema } from '../../persona-drift/config.js';
import { runPersona } from '../../persona-drift/run.js';
import { readSession } from '../../sessions/read.js';
import type { Session } from '../../sessions/types.js';
import { openStore } from '../../store/run-store.js';
import { CLIENT_SCRIPT } from './client-script.js';
import { createProbeSetup, parseProbeRequest } from '../../persona-drift/live-probe.js';
import { allowedHosts, checkOrigin } from './security.js';
import { startViewer, type ViewerServer } from './server.js';
import { startStoreViewer, viewerText } from './testing/store-viewer.js';

const SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

const req = (headers: Record<string, string>, method = 'GET') => ({ headers, method }) as unknown as IncomingMessage;

describe('origin and host checks', () => {
  const hosts = allowedHosts('127.0.0.1', 4317);

  it('accepts the viewer’s own host and origin, on 127.0.0.1 and localhost', () => {
    expect(checkOrigin(req({ host: '127.0.0.1:4317' }), hosts)).toBeUndefined();
    expect(checkOrigin(req({ host: 'localhost:4317', origin: 'http://localhost:4317' }, 'POST'), hosts)).toBeUndefined();
    expect(checkOrigin(req({ host: '127.0.0.1:4317', 'sec-fetch-site': 'same-origin', 'sec-fetch-mode': 'cors' }), hosts)).toBeUndefined();
  });

  it('refuses other origins, other ports, rebinding hosts and cross-site subresource requests', () => {
    expect(checkOrigin(req({ host: '127.0.0.1:4317', origin: 'http://evil.example' }, 'POST'), hosts)?.status).toBe(403);
    expect(checkOrigin(req({ host: '127.0.0.1:4317', origin: 'http://127.0.0.1:9999' }, 'POST'), hosts)?.status).toBe(403);
    expect(checkOrigin(req({ host: '127.0.0.1:4317', origin: 'null' }, 'POST'), hosts)?.status).toBe(403);
    expect(checkOrigin(req({ host: 'attacker.example:4317' }), hosts)?.status).toBe(403);
    expect(checkOrigin(req({}), hosts)?.status).toBe(403);
    expect(checkOrigin(req({ host: '127.0.0.1:4317', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'no-cors' }), hosts)?.status).toBe(403);
    expect(checkOrigin(req({ host: '127.0.0.1:4317', 'sec-fetch-site': 'same-site', 'sec-fetch-mode': 'no-cors' }), hosts)?.status).toBe(403);
    // A link followed from elsewhere may open a page (it cannot read it).
    expect(checkOrigin(req({ host: '127.0.0.1:4317', 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate' }), hosts)).toBeUndefined();
  });
});

describe('client script', () => {
  it('is a valid classic script that never writes markup or evaluates strings', () => {
    expect(() => new Script(CLIENT_SCRIPT)).not.toThrow();
    expect(CLIENT_SCRIPT).not.toMatch(/innerHTML|outerHTML|insertAdjacentHTML|document\.write|\beval\(|new Function|setTimeout\('/u);
  });
});

describe('live-probe requests', () => {
  let session: Session;
  beforeAll(async () => {
    registerBuiltinSimProfiles();
    session = await readSession(SESSION);
  });

  it('accept only indexes of loaded sessions and positions and bounded probe text', () => {
    const setup = createProbeSetup([session], { target: 'sim:persona', judge: 'sim:judge', positions: 4 });
    expect(setup.sessions[0]!.positions).toHaveLength(4);
    expect(parseProbeRequest({ session: 0, position: 3, probe: ' Who are you? ' }, setup)).toEqual({
      session: 0,
      position: 3,
      probe: 'Who are you?',
      framed: true,
      anchor: false,
      sample: 0,
    });
    expect(() => parseProbeRequest({ session: 1, position: 0, probe: 'x' }, setup)).toThrow(/session/u);
    expect(() => parseProbeRequest({ session: '/etc/passwd', position: 0, probe: 'x' }, setup)).toThrow(/session/u);
    expect(() => parseProbeRequest({ session: 0, position: 4, probe: 'x' }, setup)).toThrow(/position/u);
    expect(() => parseProbeRequest({ session: 0, position: 0, probe: '   ' }, setup)).toThrow(/probe/u);
    expect(() => parseProbeRequest({ session: 0, position: 0, probe: 'x'.repeat(4001) }, setup)).toThrow(/probe/u);
    expect(() => parseProbeRequest([], setup)).toThrow(/object/u);
  });
});

describe('viewer server', () => {
  let viewer: ViewerServer;
  let runId: string;
  let memoryRunId: string;

  beforeAll(async () => {
    registerBuiltinSimProfiles();
    const db = join(mkdtempSync(join(tmpdir(), 'echolens-viewer-')), 'run.db');
    const config = personaConfigSchema.parse({
      sessions: [SESSION],
      positions: [{ steps: [40, 70] }],
      targets: ['sim:persona'],
      judges: ['sim:judge'],
      analysis: { B: 200 },
    });
    runId = (await runPersona(config, db, { progress: false, signal: new AbortController().signal })).runId;
    const memoryDb = join(mkdtempSync(join(tmpdir(), 'echolens-viewer-')), 'memory.db');
    [memoryRunId] = (await memoryRuns(memoryDb, ['sim:memory'])) as [string];
    viewer = await startViewer({
      stores: [
        { file: db, store: openStore(db, { readonly: true }) },
        { file: memoryDb, store: openStore(memoryDb, { readonly: true }) },
      ],
      sessions: [await readSession(SESSION)],
      target: createAdapter('sim:persona'),
      judge: createAdapter('sim:judge'),
      port: 0,
    });
  }, 120_000);
  afterAll(async () => viewer?.close());

  const get = (path: string) => fetch(new URL(path, viewer.url));

  it('serves pages with a strict CSP and JSON with nosniff', async () => {
    const page = await get('/');
    expect(page.status).toBe(200);
    const csp = page.headers.get('content-security-policy') ?? '';
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("default-src 'none'");
    expect(csp).not.toMatch(/unsafe/u);
    const body = await page.text();
    expect(body).toContain('<script src="/app.js" defer></script>');
    expect(body.match(/<script/gu)).toHaveLength(1);
    const api = await get('/api/runs');
    expect(api.headers.get('x-content-type-options')).toBe('nosniff');
    expect(((await api.json()) as { runs: Array<{ id: string }> }).runs.map((r) => r.id)).toEqual([runId, memoryRunId]);
    const script = await get('/app.js');
    expect(script.headers.get('content-type')).toContain('text/javascript');
  });

  it('shows every audit’s analysis (persona and memory runs) with the report’s renderers, and compares headlines', async () => {
    const runPage = await (await get(`/run?s=1&r=${memoryRunId}`)).text();
    expect(runPage).toContain(`/analysis?s=1&amp;r=${encodeURIComponent(memoryRunId)}`);
    // A complete run has no incomplete-run banner.
    expect(runPage).not.toContain('id="incomplete-run"');
    const memory = await get(`/analysis?s=1&r=${memoryRunId}`);
    expect(memory.status).toBe(200);
    const memoryPage = await memory.text();
    expect(memoryPage).toContain('instrument validity · sim:memory');
    expect(memoryPage).toContain('<svg');
    const persona = await (await get(`/analysis?s=0&r=${runId}`)).text();
    expect(persona).toMatch(/drift gap Δ · sim:persona · sim:judge<\/td><td[^>]*>[+-]\d\.\d\d \[/u);
    expect(persona).toContain('id="persona-forest"');
    // A persona run against a memory run is refused: nothing they measure is comparable.
    const mixed = await get(`/compare?a=0:${runId}&b=1:${memoryRunId}`);
    expect(mixed.status).toBe(400);
    expect(await mixed.text()).toMatch(/is a persona run and .* a memory run; compare only runs of the same audit/u);
    const same = await (await get(`/compare?a=0:${runId}&b=0:${runId}`)).text();
    expect(same).toContain('drift gap Δ · sim:persona · sim:judge');
    expect(same).toMatch(/<span class="difference">\+0\.00 \[\+0\.00, \+0\.00\]<\/span>/u);
    // Each side twice, labelled: on the shared units (what B − A is of) and as its own report's estimate.
    for (const header of ['A, shared units', 'B, shared units', 'A, own estimate', 'B, own estimate']) expect(same).toContain(`>${header}<`);
    expect(same).toContain('estimate over all its units, as its own report shows it');
    expect((await get(`/analysis?s=0&r=nope`)).status).toBe(404);
  });

  it('filters cells through the JSON API', async () => {
    const all = (await (await get(`/api/cells?s=0&r=${runId}`)).json()) as { total: number; matched: number };
    const filler = (await (await get(`/api/cells?s=0&r=${runId}&arm=filler&max=3`)).json()) as {
      matched: number;
      cells: Array<{ labels: { arm: string }; score: number }>;
    };
    expect(all.matched).toBe(all.total);
    expect(filler.matched).toBe(all.total / 2);
    expect(filler.cells.every((c) => c.labels.arm === 'filler' && c.score >= 0)).toBe(true);
    expect((await get(`/api/cells?s=0&r=${runId}&status=bogus`)).status).toBe(400);
  });

  it('answers a malformed %-escape in a report path with 400, not 500', async () => {
    const response = await get('/runs/%E0%A4%A/report');
    expect(response.status).toBe(400);
    expect(await response.text()).toContain('malformed %-escape');
  });

  it('addresses stores, runs and cells only by index and id: paths lead nowhere', async () => {
    for (const path of [
      '/../../etc/passwd',
      '/%2e%2e/%2e%2e/etc/passwd',
      '/run?s=1&r=x',
      `/run?s=-1&r=${runId}`,
      '/run?s=0&r=../../etc/passwd',
      `/cell?s=0&r=${runId}&k=../../etc/passwd`,
      '/static/../package.json',
      '/compare?a=/etc/passwd&b=0:x',
    ]) {
      const response = await get(path);
      expect(response.status, path).toBe(404);
      expect(await response.text()).not.toContain('root:');
    }
    expect((await fetch(viewer.url, { method: 'PUT' })).status).toBe(405);
  });

  it('serves the live probe at /probe, linked from every page as "Live probe"', async () => {
    const response = await get('/probe');
    expect(response.status).toBe(200);
    const page = await response.text();
    expect(page).toContain('<title>Live persona-drift probe');
    expect(page).toContain('<form class="controls" id="probe-form">');
    expect(await (await get('/')).text()).toContain('<a href="/probe">Live probe</a>');
  });

  it('no longer serves the old addresses /demo and /api/demo', async () => {
    expect((await get('/demo')).status).toBe(404);
    const response = await fetch(new URL('/api/demo', viewer.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-echolens-token': viewer.token },
      body: '{}',
    });
    // POST exists only at /api/probe.
    expect(response.status).toBe(405);
  });

  it('answers a bad live-probe request with 400 and names the field', async () => {
    const response = await fetch(new URL('/api/probe', viewer.url), {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'x-echolens-token': viewer.token },
      body: JSON.stringify({ session: 0, position: 99, probe: 'hi' }),
    });
    expect(response.status).toBe(400);
    expect(((await response.json()) as { error: string }).error).toMatch(/^position:/u);
  });
});

describe('viewer on an incomplete run', () => {
  let viewer: ViewerServer;
  let runId: string;
  // A stage name with markup: the banner must print it escaped.
  const STAGE = 'labeling<b>&';
  const MESSAGE = 'incomplete run: stage labeling&lt;b&gt;&amp; has 0 of 960 cells — re-run the same command to finish';

  beforeAll(async () => {
    const db = join(mkdtempSync(join(tmpdir(), 'echolens-viewer-')), 'memory.db');
    [runId] = (await memoryRuns(db, ['sim:memory'])) as [string];
    // What a run killed between two stages leaves: a stage short of its cells, the run interrupted.
    const writer = openStore(db);
    await writer.recordStage(runId, STAGE, { expected: 960, registered: 0, settled: 0 });
    await writer.setRunStatus(runId, 'interrupted');
    await writer.close();
    viewer = await startStoreViewer(db, openStore(db, { readonly: true }), { target: 'sim:memory' });
  }, 120_000);
  afterAll(async () => viewer?.close());

  const text = (path: string) => viewerText(viewer, path);

  it('puts the report’s refusal, escaped, in a banner on the run, cell and analysis pages', async () => {
    const cells = (await (await fetch(new URL(`/api/cells?s=0&r=${runId}`, viewer.url))).json()) as { cells: Array<{ key: string }> };
    for (const path of [`/run?s=0&r=${runId}`, `/cell?s=0&r=${runId}&k=${cells.cells[0]!.key}`, `/analysis?s=0&r=${runId}`]) {
      const page = await text(path);
      expect(page, path).toMatch(new RegExp(`<p class="banner incomplete-run" id="incomplete-run">[^]*?${MESSAGE}[^]*?</p>`, 'u'));
      expect(page, path).not.toContain(STAGE);
    }
  });

  it('marks the run incomplete in the run list and in /api/runs, with the same message', async () => {
    const list = await text('/');
    expect(list).toContain('<span class="run-status status-incomplete"');
    expect(list).toContain(`<span class="muted">${MESSAGE}</span>`);
    expect(list).toContain('no verdict: the run is incomplete');
    const api = (await (await fetch(new URL('/api/runs', viewer.url))).json()) as { runs: Array<{ id: string; incomplete: string | null }> };
    expect(api.runs.find((r) => r.id === runId)?.incomplete).toBe(MESSAGE.replace('&lt;b&gt;&amp;', '<b>&'));
  });
});
