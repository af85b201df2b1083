import { mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { hashCanonical } from '../core/canonical-json.js';
import { loadPersonaConfig, personaConfigFromFlags } from './run.js';

describe('persona config', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-config-'));

  it('builds a complete config from command-line flags alone, with the paper defaults', () => {
    const config = personaConfigFromFlags(['sessions=["~/s.jsonl", "rel.jsonl"]', 'targets=["sim:persona"]', 'judges=["sim:judge"]']);
    expect(config.sessions).toEqual([join(homedir(), 's.jsonl'), join(process.cwd(), 'rel.jsonl')]);
    expect(config).toMatchObject({ render: 'flat', windowChars: 30000, arms: ['real', 'filler'], positions: [{ uniform: 12 }] });
    expect(config.probes.categories).toEqual(['coding_self']);
    expect(config.judgeDecoding).toEqual({ temperature: 0, maxTokens: 400 });
  });

  it('names the missing key when flags are not enough', () => {
    expect(() => personaConfigFromFlags(['targets=["sim:persona"]'])).toThrow(/sessions: .*command line/u);
  });

  it('names file, line and key of a bad value, and resolves sessions next to the file', () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\nwindowChars: -5\n');
    expect(() => loadPersonaConfig(file)).toThrow(`${file}:4: windowChars:`);
    const good = join(dir, 'good.yaml');
    writeFileSync(good, 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\n');
    expect(loadPersonaConfig(good).sessions).toEqual([join(dir, 'a.jsonl')]);
  });

  it('refuses probes without a judge and unknown keys', () => {
    const file = join(dir, 'nojudge.yaml');
    writeFileSync(file, 'sessions: [a.jsonl]\ntargets: [sim:persona]\n');
    expect(() => loadPersonaConfig(file)).toThrow(/judges: the probe surface needs at least one judge/u);
    const typo = join(dir, 'typo.yaml');
    writeFileSync(typo, 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\nsampels: 3\n');
    expect(() => loadPersonaConfig(typo)).toThrow(/sampels|Unrecognized key/u);
  });

  describe('interventions: the concept name of mitigations', () => {
    const head = 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\n';
    const load = (name: string, body: string) => {
      const file = join(dir, name);
      writeFileSync(file, head + body);
      return { file, load: () => loadPersonaConfig(file) };
    };

    it('normalizes to the same config as mitigations (same keys in the same order, same run id)', () => {
      const viaMitigations = load('mitigations.yaml', 'mitigations: [none, a-anchor, placebo_iso_recipe]\n').load();
      const viaInterventions = load('interventions.yaml', 'interventions: [none, a-anchor, placebo_iso_recipe]\n').load();
      expect(viaInterventions).toEqual(viaMitigations);
      expect(JSON.stringify(viaInterventions)).toBe(JSON.stringify(viaMitigations));
      expect('interventions' in viaInterventions).toBe(false);
      expect(viaInterventions.mitigations).toEqual(['none', 'a-anchor', 'placebo_iso_recipe']);
      const runId = (config: object) => hashCanonical({ experiment: 'persona-drift', config });
      expect(runId(viaInterventions)).toBe(runId(viaMitigations));
      // Neither key: the control alone, in the same place among the keys.
      const neither = load('neither.yaml', '').load();
      expect(neither.mitigations).toEqual(['none']);
      expect(Object.keys(neither)).toEqual(Object.keys(viaMitigations));
    });

    it('validates interventions as mitigations are validated, naming the key given', () => {
      const unknown = load('bad-intervention.yaml', 'interventions: [none, a-ankor]\n');
      expect(unknown.load).toThrow(`${unknown.file}:4: interventions.1:`);
      const empty = load('empty-interventions.yaml', 'interventions: []\n');
      expect(empty.load).toThrow(`${empty.file}:4: interventions:`);
      const goal = load('goal-interventions.yaml', 'arms: [filler]\ninterventions: [goal]\n');
      expect(goal.load).toThrow(/interventions: interventions apply to the real arm; add "real" to arms/u);
      const goalOld = load('goal-mitigations.yaml', 'arms: [filler]\nmitigations: [goal]\n');
      expect(goalOld.load).toThrow(/mitigations: mitigations apply to the real arm; add "real" to arms/u);
    });

    it('refuses a config that gives both keys, naming both', () => {
      const both = load('both.yaml', 'mitigations: [none]\ninterventions: [none, a-anchor]\n');
      expect(both.load).toThrow(`${both.file}:5: interventions: give the intervention arms once: "interventions" and "mitigations" are two names of one key`);
      expect(() => personaConfigFromFlags(['sessions=["s.jsonl"]', 'targets=["sim:persona"]', 'judges=["sim:judge"]', 'mitigations=["none"]', 'interventions=["none"]'])).toThrow(
        /"interventions" and "mitigations"/u,
      );
    });
  });
});
