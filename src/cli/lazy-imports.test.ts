import { readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';

/**
 * What a command loads before it runs is its modules' static import graph (issue #44: everyday
 * commands start fast). Packages that cost a second of CPU or more to load — the PII detectors'
 * NLP lexicon, the Parquet reader, the HTTP client — are imported where they are used
 * (`await import(…)`), never at the top of a module a listing, a report or a help text reaches.
 */

const src = resolve(dirname(fileURLToPath(import.meta.url)), '..');
// Value imports only: `import type` and type-only re-exports load nothing.
const STATIC_IMPORT = /^\s*(?:import|export)\s+(?!type\s)(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]/gmu;

function resolveLocal(from: string, spec: string): string | null {
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/u, '.ts'), `${base}.ts`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

/** Every package a module loads through static imports, with the first module that imports it; and how many modules the walk read. */
function staticPackages(entry: string): { packages: Map<string, string>; modules: number; files: Set<string> } {
  const packages = new Map<string, string>();
  const seen = new Set<string>();
  const queue = [join(src, entry)];
  while (queue.length > 0) {
    const file = queue.pop() as string;
    if (seen.has(file)) continue;
    seen.add(file);
    const text = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\//gu, '');
    for (const match of text.matchAll(STATIC_IMPORT)) {
      const spec = match[1] as string;
      if (spec.startsWith('.')) {
        const target = resolveLocal(file, spec);
        if (target !== null) queue.push(target);
      } else if (!spec.startsWith('node:') && !packages.has(spec)) packages.set(spec, relative(src, file));
    }
  }
  return { packages, modules: seen.size, files: seen };
}

describe('heavy packages load on first use', () => {
  it('the sessions commands (list, show, inspect, redact, verify) load no PII detector until redact or verify runs', () => {
    for (const entry of ['cli/commands/sessions.ts', 'cli/commands/sessions-redact.ts']) {
      const { packages, modules } = staticPackages(entry);
      expect(modules, entry).toBeGreaterThan(3); // the walk follows imports at all
      for (const heavy of ['compromise', 'libphonenumber-js', 'ibantools']) expect(packages.get(heavy), `${entry} → ${heavy}`).toBeUndefined();
    }
  });

  it('a warm `sessions list` loads no transcript parser: read.ts (and its zstd reader) load on the first file the cache does not answer', () => {
    const { packages } = staticPackages('cli/commands/sessions.ts');
    expect(packages.get('fzstd')).toBeUndefined();
  });

  it('no module imports the HTTP client, the Parquet reader or the NLP lexicon at its top', () => {
    for (const entry of ['audits.ts', 'builtin-sims.ts', 'cli/commands/persona.ts', 'cli/commands/report.ts', 'cli/commands/gate.ts', 'cli/commands/view.ts']) {
      const { packages, modules } = staticPackages(entry);
      expect(modules, entry).toBeGreaterThan(3); // the walk follows imports at all
      for (const heavy of ['undici', 'hyparquet', 'compromise']) expect(packages.get(heavy), `${entry} → ${heavy}`).toBeUndefined();
    }
  });

  it('the report, gate and viewer commands (and the audit registry) load no AI SDK: providers and embeddings load it on their first call', () => {
    for (const entry of ['audits.ts', 'cli/commands/persona.ts', 'cli/commands/report.ts', 'cli/commands/gate.ts', 'cli/commands/view.ts']) {
      const { packages, modules } = staticPackages(entry);
      expect(modules, entry).toBeGreaterThan(3); // the walk follows imports at all
      const sdk = [...packages].filter(([name]) => name === 'ai' || name.startsWith('@ai-sdk/') || name.startsWith('@opentelemetry/'));
      expect(sdk, entry).toEqual([]);
    }
  });

  it('the report, gate and viewer commands (and the audit registry) load no execution engine: a run loads it when it starts', () => {
    for (const entry of ['audits.ts', 'cli/commands/persona.ts', 'cli/commands/report.ts', 'cli/commands/gate.ts', 'cli/commands/view.ts']) {
      const { files } = staticPackages(entry);
      expect(files.size, entry).toBeGreaterThan(3); // the walk follows imports at all
      const engine = ['execution/engine.ts', 'store/runner.ts', 'experiment/runtime.ts', 'store/batch-runner.ts'].filter((m) => files.has(join(src, m)));
      expect(engine, entry).toEqual([]);
    }
    // The audits' run modules are reached (they start runs), and still load no engine until one starts.
    expect(staticPackages('audits.ts').files.has(join(src, 'persona-drift', 'run.ts'))).toBe(true);
  });

  it('the audits (all three, and persona alone for `persona report`) load no transcript reader, preflight or run lifecycle: a run loads them when it starts', () => {
    for (const entry of ['audits.ts', 'persona-drift/audit.ts', 'cli/commands/persona.ts', 'cli/commands/report.ts', 'cli/commands/gate.ts']) {
      const { files } = staticPackages(entry);
      expect(files.size, entry).toBeGreaterThan(3); // the walk follows imports at all
      const runSide = [
        'sessions/read.ts',
        'experiment/preflight.ts',
        'experiment/run-audit.ts',
        'models/create-adapter.ts',
        'memory-drift/hf-datasets.ts',
      ].filter((m) => files.has(join(src, m)));
      expect(runSide, entry).toEqual([]);
    }
  });
});

describe('commands that call no model register no simulated model', () => {
  it('reports, the gate and the other store readers are told apart from commands that may call a model', async () => {
    const { callsNoModel } = await import('./program.js');
    for (const args of [
      ['report', 'x.db'],
      ['gate', 'x.db', '--json'],
      ['persona', 'report', 'x.db'],
      ['memory', 'report', 'x.db', '-o', 'r.md'],
      ['history', 'x.db'],
      ['compare', 'a.db', 'b.db'],
    ]) {
      expect(callsNoModel(args), args.join(' ')).toBe(true);
    }
    for (const args of [
      ['persona', 'run', 'p.yaml'],
      ['view', 'x.db'],
      ['ask', 'sim:echo', 'hi'],
      ['demo'],
      ['runs', 'list', 'x.db'],
      ['persona', 'rejudge', 'x.db'],
      [],
    ]) {
      expect(callsNoModel(args), args.join(' ')).toBe(false);
    }
  });
});
