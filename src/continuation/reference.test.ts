import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { packageRoot } from '../core/version.js';
import { hashBytes } from '../materials/files.js';
import { CONTEXTECHO_FIXTURE } from '../materials/testing/fixtures.js';
import { readSession } from '../sessions/read.js';
import { openStore } from '../store/run-store.js';
import { CONTINUATION_ARMS } from './arms.js';
import { type ContinuationConfig, continuationConfigSchema } from './config.js';
import { CONTINUATION_MATERIALS_FILE, loadContinuationMaterials } from './materials.js';
import { referenceCallScore } from './reference-fidelity.js';
import { sectionsHtml } from '../report/document/render-html.js';
import { continuationSections, renderContinuationMarkdown } from './document.js';
import { continuationReport, planAndPrime, runContinuation } from './run.js';
import { auditRunId } from '../experiment/analyze-run.js';

registerBuiltinSimProfiles();

const DEMO = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');

/** A clone of the ContextEcho layout whose e07 runner defines all three texts (placeholder wording). */
function cloneWithTools(): string {
  const root = mkdtempSync(join(tmpdir(), 'echolens-contextecho-e07-'));
  mkdirSync(join(root, 'experiments', 'e07_downstream_pilot'), { recursive: true });
  writeFileSync(
    join(root, CONTINUATION_MATERIALS_FILE),
    [
      '"""Fixture e07 runner (placeholder texts written for echolens tests)."""',
      'ACK_MESSAGE = "FIXTURE ACK."',
      'SYSTEM_PROMPT = (',
      '    "FIXTURE CONTINUATION PROMPT: "',
      '    "one tool call."',
      ')',
      'TOOLS = [',
      '    {"name": "Bash", "description": "Run it.", "input_schema": {"type": "object", "properties": {"command": {"type": "string"}, "timeout": {"type": "number"}}, "required": ["command"]}},',
      '    {"name": "Read", "description": "Read it.", "input_schema": {"type": "object", "properties": {"file_path": {"type": "string"}, "limit": {"type": "integer"}}, "required": ["file_path"], "additionalProperties": False}},',
      ']',
      '',
    ].join('\n'),
  );
  return root;
}

function config(extra: Record<string, unknown>): ContinuationConfig {
  return continuationConfigSchema.parse({ session: DEMO, targets: ['sim:continuation'], cutpoints: { count: 12 }, ...extra });
}

describe('continuation with the authors’ e07 materials', () => {
  it('sends their system prompt, acknowledgement turn and tool schemas; the manifest names the file and its hash', async () => {
    const clone = cloneWithTools();
    const session = await readSession(DEMO);
    const plan = planAndPrime(config({ materials: clone }), session, undefined);
    expect(plan.toolSource).toBe(`materials:${CONTINUATION_MATERIALS_FILE} TOOLS`);
    for (const spec of plan.specs) {
      expect(spec.request.messages[0]).toEqual({ role: 'system', content: 'FIXTURE CONTINUATION PROMPT: one tool call.' });
      expect(spec.request.tools?.map((t) => t.name)).toEqual(['Bash', 'Read']);
      expect(spec.request.tools?.[1]?.inputSchema).toEqual({
        type: 'object',
        properties: { file_path: { type: 'string' }, limit: { type: 'integer' } },
        required: ['file_path'],
        additionalProperties: false,
      });
      // A prefix ending on a user turn is closed by their acknowledgement.
      const assistants = spec.request.messages.filter((m) => m.role === 'assistant');
      if (spec.labels.arm !== 'scratch') expect(assistants.at(-1)?.content).toBe('FIXTURE ACK.');
    }
    const db = join(clone, 'run.db');
    const run = await runContinuation(config({ materials: clone }), db, { progress: false });
    const store = openStore(db, { readonly: true });
    const options = (await store.requireRun(run.runId)).manifest.options as {
      materials: { files: Array<{ path: string; sha256: string }> };
      procedure: string;
    };
    await store.close();
    expect(options.procedure).toBe('echolens');
    expect(options.materials.files).toEqual([
      {
        path: CONTINUATION_MATERIALS_FILE,
        sha256: hashBytes(readFileSync(join(clone, CONTINUATION_MATERIALS_FILE))),
        bytes: readFileSync(join(clone, CONTINUATION_MATERIALS_FILE)).length,
      },
    ]);
  });

  it('uses each text only where the clone defines it, and notes the rest', () => {
    const loaded = loadContinuationMaterials(CONTEXTECHO_FIXTURE);
    expect(loaded?.acknowledgement).toBe('ACKNOWLEDGEMENT PLACEHOLDER.');
    expect(loaded?.systemPrompt).toBe('CONTINUATION SYSTEM PROMPT PLACEHOLDER.');
    expect(loaded?.tools).toBeNull();
    expect(loaded?.record.notes).toEqual([`${CONTINUATION_MATERIALS_FILE} defines no TOOLS: echolens's tool set (reconstructed from the transcript) is used`]);
    expect(loadContinuationMaterials('echolens')).toBeNull();
    const broken = cloneWithTools();
    writeFileSync(join(broken, CONTINUATION_MATERIALS_FILE), 'TOOLS = [{"description": "no name"}]\n');
    expect(() => loadContinuationMaterials(broken)).toThrow(/run_continuation\.py:1: TOOLS\.0\.name: tool name must match/u);
  });
});

describe('procedure: reference scores the panel as the authors do, beside the calibrated verdict', () => {
  it('reports tool match and argument similarity per arm, and every contrast under both scorings', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-continuation-reference-'));
    const db = join(dir, 'run.db');
    const run = await runContinuation(config({ procedure: 'reference', cutpoints: { count: 25 }, decoding: { seed: 3 } }), db, { progress: false });
    const store = openStore(db, { readonly: true });
    const report = await continuationReport(store, await auditRunId(store, 'continuation'), { resamples: 20_000 });
    const cells = await store.cellResultsOfRun(run.runId);
    await store.close();
    const reference = report.reference;
    if (reference === null) throw new Error('no reference block');
    expect(reference.verdict).toBe('calibrated');
    const target = reference.targets[0];
    if (target === undefined) throw new Error('no target');
    expect(target.arms.map((a) => a.arm).sort()).toEqual([...CONTINUATION_ARMS].sort());
    // Recomputed here from the stored answers: M1 and M2 per arm.
    const byCut = new Map(report.cutpoints.map((c) => [c.id, c]));
    for (const arm of target.arms) {
      const mine = cells.filter((c) => c.labels.stage === 'target' && c.labels.arm === arm.arm && (c.result.status === 'done' || c.result.status === 'empty'));
      const scores = mine.map((c) => referenceCallScore(byCut.get(String(c.labels.cutpoint))!.groundTruth, c.result.toolCalls));
      expect(arm.generated).toBe(mine.length);
      expect(arm.toolMatches).toBe(scores.filter((s) => s.toolMatch).length);
      const matched = scores.flatMap((s) => (s.argSimilarity === null ? [] : [s.argSimilarity]));
      expect(arm.argSimilarity).toBeCloseTo(matched.reduce((a, b) => a + b, 0) / matched.length, 12);
    }
    // The contrasts are the calibrated analysis's, on the authors' fidelity; the primary one is there.
    expect(target.analysis.contrasts.map((c) => `${c.a}-${c.b}`)).toEqual(report.analysis.targets[0]?.contrasts.map((c) => `${c.a}-${c.b}`));
    expect(target.analysis.contrasts.find((c) => c.primary)?.completeCase.n).toBeGreaterThan(0);

    const markdown = renderContinuationMarkdown(report);
    expect(markdown).toContain('## The authors’ scoring (procedure: reference)');
    expect(markdown).toContain('recent − cross (primary) | complete case |');
    expect(markdown).toMatch(/\| (\*\*differs\*\*|same) \|/u);

    const section = String(await sectionsHtml(continuationSections(report)));
    expect(section).toContain('<h3>The authors’ scoring (procedure: reference)</h3>');
    expect(section).toContain('tool match (M1)');

    // The default procedure has no reference block.
    const plain = await runContinuation(config({ cutpoints: { count: 25 }, decoding: { seed: 3 } }), join(dir, 'plain.db'), { progress: false });
    const store2 = openStore(join(dir, 'plain.db'), { readonly: true });
    expect((await continuationReport(store2, plain.runId)).reference).toBeNull();
    await store2.close();
  });
});
