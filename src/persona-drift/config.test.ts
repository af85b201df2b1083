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
    expect(() => personaConfigFromFlags(['targets=["sim:persona"]'])).toThrow(/sessions: .*--set flag/u);
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

  describe('mitigations: the intervention arms', () => {
    const head = 'sessions: [a.jsonl]\ntargets: [sim:persona]\njudges: [sim:judge]\n';
    const load = (name: string, body: string) => {
      const file = join(dir, name);
      writeFileSync(file, head + body);
      return { file, load: () => loadPersonaConfig(file) };
    };

    it('defaults to the control alone, in the same place among the keys as a given list', () => {
      const given = load('mitigations.yaml', 'mitigations: [none, a-anchor, placebo_iso_recipe]\n').load();
      expect(given.mitigations).toEqual(['none', 'a-anchor', 'placebo_iso_recipe']);
      const neither = load('neither.yaml', '').load();
      expect(neither.mitigations).toEqual(['none']);
      expect(Object.keys(neither)).toEqual(Object.keys(given));
      const runId = (config: object) => hashCanonical({ experiment: 'persona-drift', config });
      expect(runId(neither)).not.toBe(runId(given));
    });

    it('names the file, line and key of a bad list', () => {
      const unknown = load('bad-mitigation.yaml', 'mitigations: [none, a-ankor]\n');
      expect(unknown.load).toThrow(`${unknown.file}:4: mitigations.1:`);
      const empty = load('empty-mitigations.yaml', 'mitigations: []\n');
      expect(empty.load).toThrow(`${empty.file}:4: mitigations:`);
      const goal = load('goal-mitigations.yaml', 'arms: [filler]\nmitigations: [goal]\n');
      expect(goal.load).toThrow(/mitigations: mitigations apply to the real arm; add "real" to arms/u);
    });

    it('has one name: interventions is an unknown key', () => {
      const other = load('interventions.yaml', 'interventions: [none, a-anchor]\n');
      expect(other.load).toThrow(/interventions|Unrecognized key/u);
    });
  });
});
