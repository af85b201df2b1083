import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { canonicalJson } from '../core/canonical-json.js';
import { packageRoot } from '../core/version.js';
import { loadContextEchoMaterials } from '../materials/contextecho.js';
import { hashBytes } from '../materials/files.js';
import { materialsMarkdown, runMaterials } from '../materials/report.js';
import { CONTEXTECHO_FIXTURE } from '../materials/testing/fixtures.js';
import { suiteFakeOpenAI } from '../experiment/testing/suite-server.js';
import type { FakeRequest } from '../models/testing/index.js';
import { readSession } from '../sessions/read.js';
import { openStore } from '../store/run-store.js';
import { type PersonaConfig, personaConfigSchema, personaProcedure } from './config.js';
import { JUDGE_RUBRIC_TITLE, parseJudgeOutputFirstObject } from './judge.js';
import { loadPersonaMaterials } from './materials.js';
import { loadPersonaConfig, personaReport, planPersona, runPersona } from './run.js';
import { loadPersonaStimuli } from './stimuli.js';

const SESSION = join(packageRoot(), 'data', 'demo', 'claude-session.jsonl');
const quiet = { progress: false } as const;

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content)) return content.map((part) => (part as { text?: string }).text ?? '').join('');
  return '';
}

function messagesOf(request: FakeRequest): Array<{ role: string; text: string }> {
  const messages = (request.body?.messages ?? []) as Array<{ role: string; content: unknown }>;
  return messages.map((m) => ({ role: m.role, text: textOf(m.content) }));
}

describe('persona materials and procedure', () => {
  const reference = loadContextEchoMaterials(CONTEXTECHO_FIXTURE);

  it('default config: the same cells as naming the echolens materials and procedure explicitly', async () => {
    const session = await readSession(SESSION);
    const base = {
      sessions: [SESSION],
      positions: [{ steps: [30, 60] }],
      arms: ['real', 'filler', 'filler-flat'],
      mitigations: ['none', 'a-anchor', 'v2'],
      stressors: { ids: ['S1', 'S4'], paraphrases: 2 },
      targets: ['sim:persona'],
      judges: ['sim:judge'],
    };
    const implicit = planPersona(personaConfigSchema.parse(base), [session]);
    const explicit = planPersona(
      personaConfigSchema.parse({ ...base, materials: 'echolens', procedure: 'echolens', judgeParse: 'strict', judgeTemperature: 'configured' }),
      [session],
    );
    expect(canonicalJson(explicit.map((c) => c.request))).toBe(canonicalJson(implicit.map((c) => c.request)));
    // The echolens texts are what the default plan sends.
    const stimuli = loadPersonaStimuli();
    const last = implicit.map((c) => c.request.messages.at(-1)?.content);
    expect(last).toContain(stimuli.stressors[0]?.prompts[0]);
    expect(personaProcedure(personaConfigSchema.parse(base))).toMatchObject({ name: 'echolens', judgeParse: 'strict', stressorSystemPrompt: null });
  });

  it('procedure: reference sets every difference; each key can be set alone', () => {
    const base = { sessions: [SESSION], targets: ['sim:persona'], judges: ['sim:judge'] };
    expect(personaProcedure(personaConfigSchema.parse({ ...base, procedure: 'reference' }))).toEqual({
      name: 'reference',
      judgeParse: 'first-object',
      judgeTemperature: 'api-default',
      stressorSystemPrompt: 'format-strict',
      includeSidechains: true,
      compactionSummaryAsStep: true,
    });
    expect(personaProcedure(personaConfigSchema.parse({ ...base, procedure: 'reference', includeSidechains: false })).includeSidechains).toBe(false);
    expect(personaProcedure(personaConfigSchema.parse({ ...base, judgeParse: 'first-object' }))).toMatchObject({
      name: 'echolens',
      judgeParse: 'first-object',
      judgeTemperature: 'configured',
    });
    expect(() => personaConfigSchema.parse({ ...base, stressorSystemPrompt: 'loud' })).toThrow(/unknown system prompt/u);
  });

  it('a clone path that is not a folder is a config error', () => {
    expect(() => loadPersonaMaterials(join(CONTEXTECHO_FIXTURE, 'nope'))).toThrow(/materials: ".*nope" is not a folder/u);
  });

  it('the lenient judge parse takes the first JSON object, as the reference does', () => {
    expect(parseJudgeOutputFirstObject('Here: {"score": 2, "label": "drifted"} and {"score": 0}')).toMatchObject({ ok: true, score: 2 });
    expect(parseJudgeOutputFirstObject('{not json} {"score": "1"}')).toMatchObject({ ok: true, score: 1 });
    expect(parseJudgeOutputFirstObject('{"score": 2.7}')).toMatchObject({ ok: true, score: 2 });
    expect(parseJudgeOutputFirstObject('{"score": 5}')).toMatchObject({ ok: false });
    expect(parseJudgeOutputFirstObject('{"reason": "x"} {"score": 1}')).toMatchObject({ ok: false });
    expect(parseJudgeOutputFirstObject('no object')).toMatchObject({ ok: false });
  });

  describe('a run with materials: <fixture clone> on the wire', () => {
    const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-materials-'));
    const fake = suiteFakeOpenAI({
      respond: (request) => {
        const system = messagesOf(request)[0]?.text ?? '';
        // Prose around the JSON: only the reference's lenient parse reads it.
        if (system.startsWith('JUDGE RUBRIC PLACEHOLDER')) return { text: 'Verdict: {"score": 3, "label": "x", "reason": "r"} done' };
        return { text: 'ls' };
      },
    });

    function fixtureConfig(extra: Record<string, unknown> = {}): PersonaConfig {
      return personaConfigSchema.parse({
        sessions: [SESSION],
        positions: [{ steps: [40] }],
        arms: ['real', 'filler-flat'],
        mitigations: ['none', 'a-anchor', 'v0', 'v2'],
        probes: { categories: ['coding_self'], negativeControls: true },
        stressors: { ids: ['S1', 'S2', 'S3', 'S4'], paraphrases: 10 },
        targets: [`openai-compatible:fake-target@${fake.server.baseURL}`],
        judges: [`openai-compatible:fake-judge@${fake.server.baseURL}`],
        materials: CONTEXTECHO_FIXTURE,
        procedure: 'reference',
        analysis: { B: 200 },
        ...extra,
      });
    }

    it('sends exactly the fixture texts, records them with their hashes, and parses judges leniently', async () => {
      const db = join(dir, 'wire.db');
      const run = await runPersona(fixtureConfig(), db, { ...quiet, signal: new AbortController().signal });
      expect(run.interrupted).toBe(false);
      expect(run.invalidJudgements).toBe(0);

      const requests = fake.server.requests.map((r) => ({ body: r.body, messages: messagesOf(r) }));
      const judges = requests.filter((r) => r.messages[0]?.text.startsWith('JUDGE RUBRIC PLACEHOLDER'));
      const targets = requests.filter((r) => !r.messages[0]?.text.startsWith('JUDGE RUBRIC PLACEHOLDER'));
      // 7 probe items × 5 contexts = 35 probe cells; every target answered "ls", so the store asks the
      // judge once per distinct (probe, response) request: 7 calls.
      expect(judges).toHaveLength(7);
      for (const judge of judges) {
        expect(judge.messages[0]?.text).toBe(reference.judgeRubric);
        expect(judge.body).not.toHaveProperty('temperature');
        expect(judge.messages[1]?.text).toMatch(/^PROBE:\n(PROBE|NEGATIVE CONTROL) PLACEHOLDER /u);
      }
      const wire = JSON.stringify(fake.server.requests.map((r) => r.body));
      expect(wire).not.toContain(JUDGE_RUBRIC_TITLE);
      const echolens = loadPersonaStimuli();
      expect(wire).not.toContain(echolens.probes.framing);
      expect(wire).not.toContain(echolens.stressors[1]?.prompts[0]);

      const probeTexts = new Set(
        [...reference.probes.filter((p) => p.category === 'coding_self'), ...reference.negativeControls].map((p) => `${reference.framing}\n\n${p.text}`),
      );
      const stressorTexts = new Set(Object.values(reference.stressors).flat());
      expect(stressorTexts.size).toBe(31);
      const finals = new Set<string>();
      for (const target of targets) {
        const system = target.messages[0];
        const last = target.messages.at(-1)?.text ?? '';
        finals.add(last);
        if (stressorTexts.has(last)) expect(system?.text).toBe(reference.stressorSystemPrompt);
        else {
          expect(probeTexts.has(last)).toBe(true);
          expect(system?.text).toBe(reference.probeSystemPrompt);
        }
        // The prefix (real or filler-flat) is followed by the authors' acknowledgement.
        expect(target.messages[2]).toEqual({ role: 'assistant', text: reference.acknowledgement });
      }
      expect(finals).toEqual(new Set([...probeTexts, ...stressorTexts]));

      const flat = targets.filter((t) => t.messages[1]?.text.startsWith('FILLER TEMPLATE PLACEHOLDER'));
      expect(flat.length).toBe(7 + 31);
      const filler = flat[0]?.messages[1]?.text ?? '';
      expect(reference.fillerTemplate.repeat(Math.ceil(filler.length / reference.fillerTemplate.length)).startsWith(filler)).toBe(true);

      const inserted = (mitigationFirstTurn: string) => targets.filter((t) => t.messages[3]?.text === mitigationFirstTurn);
      const anchored = inserted(reference.anchors.aUser);
      expect(anchored).toHaveLength(38);
      expect(anchored[0]?.messages.slice(5, 7)).toEqual([
        { role: 'user', text: reference.anchors.aDemoUser },
        { role: 'assistant', text: reference.anchors.aDemoAssistant },
      ]);
      expect(inserted(reference.anchors.v0)).toHaveLength(38);
      const v2 = inserted(reference.anchors.v2User);
      expect(v2).toHaveLength(38);
      expect(v2[0]?.messages[5]).toEqual({ role: 'user', text: reference.anchors.v2DemoUser });

      const store = openStore(db, { readonly: true });
      const manifest = (await store.requireRun(run.runId)).manifest;
      const report = await personaReport(store, run.runId);
      const section = materialsMarkdown(await runMaterials(store, run.runId));
      await store.close();
      const judgeHash = hashBytes(readFileSync(join(CONTEXTECHO_FIXTURE, 'harness/judge.py')));
      expect(section).toContain(`| \`harness/judge.py\` | \`${judgeHash}\` |`);
      expect(section).toMatch(/Procedure: name reference, judgeParse first-object, judgeTemperature api-default, stressorSystemPrompt format-strict/u);
      const record = (manifest.options as { materials: { source: string; files: Array<{ path: string; sha256: string }> } }).materials;
      expect(record.source).toBe('reference');
      expect(record.files).toHaveLength(12);
      for (const file of record.files) expect(file.sha256).toBe(hashBytes(readFileSync(join(CONTEXTECHO_FIXTURE, file.path))));
      expect((manifest.options as { procedure: { name: string } }).procedure.name).toBe('reference');
      // Every judge answer had prose around the JSON; the lenient parse scored them all.
      expect(report.counts.invalidJudgements).toHaveLength(5);
      for (const row of report.counts.invalidJudgements) expect(row).toMatchObject({ invalid: 0, judged: 7 });
    });

    it('a relative materials path in a config file is relative to the file', async () => {
      const cfg = loadPersonaConfig(join(packageRoot(), 'src', 'materials', '__fixtures__', 'persona.yaml'));
      expect(cfg.materials).toBe(CONTEXTECHO_FIXTURE);
    });
  });
});
