import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, it } from 'vitest';
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { ConfigError } from '../core/errors.js';
import { countTokens } from '../models/token-count.js';
import { openStore } from '../store/run-store.js';
import type { GapEstimate } from './analysis.js';
import { anchorVariants, resizedInsertion } from './anchor-ablation.js';
import { framingLevels } from './config.js';
import { sectionsHtml } from '../report/document/render-html.js';
import { sectionsMarkdown } from '../report/document/render-markdown.js';
import { personaSections } from './document.js';
import { assembleProbeMessages } from './interventions.js';
import { personaCsvRows } from './report-csv.js';
import { plannedItems } from './plan.js';
import { personaReport, runPersona } from './run.js';
import { loadPersonaStimuli } from './stimuli.js';
import { smallPersonaConfig } from './testing/small-config.js';

/** Probe framing as a design factor (App. S) and the anchor-ablation grid (App. F/G): config, plan, messages, report rows. */

const stimuli = loadPersonaStimuli();
const texts = stimuli.interventions;

const config = smallPersonaConfig;

beforeAll(() => registerBuiltinSimProfiles());

describe('probe framing as a design factor', () => {
  it('reads on/off and booleans; [on, off] plans every probe framed and bare', () => {
    expect(framingLevels(config({}))).toEqual([true]);
    expect(framingLevels(config({ probes: { framing: 'off' } }))).toEqual([false]);
    expect(framingLevels(config({ probes: { framing: ['off', true] } }))).toEqual([false, true]);
    expect(framingLevels(config({ probes: { framing: ['on', true] } }))).toEqual([true]);
    const one = plannedItems(config({}), stimuli);
    const both = plannedItems(config({ probes: { categories: ['coding_self'], framing: ['on', 'off'] } }), stimuli);
    expect(both).toHaveLength(2 * one.length);
    const framed = both.filter((i) => i.framed);
    const bare = both.filter((i) => i.framed === false);
    expect(framed.map((i) => i.request)).toEqual(one.map((i) => i.request));
    expect(bare.map((i) => i.request)).toEqual(one.map((i) => i.bareProbe));
    expect(() => config({ probes: { framing: ['sideways'] } })).toThrow();
  });
});

describe('anchor ablation grid', () => {
  it('resizes the anchor to whole sentences with the announcement kept last, and records the tokens', () => {
    const own = resizedInsertion('a-anchor', texts, null);
    const small = resizedInsertion('a-anchor', texts, 10);
    const large = resizedInsertion('a-anchor', texts, 180);
    const tokens = (turns: readonly { content: string }[]) => turns.reduce((n, m) => n + countTokens(m.content), 0);
    expect(tokens(small)).toBeLessThan(tokens(own));
    expect(tokens(large)).toBeGreaterThanOrEqual(180);
    for (const turns of [small, large]) {
      expect(turns.slice(1)).toEqual(own.slice(1));
      expect(turns[0]!.content.endsWith(texts.demoAnnouncement)).toBe(true);
    }
    expect(small[0]!.content.startsWith('[Reminder] You are an AI assistant.')).toBe(true);
  });

  it('plans sizes × placements × turns, placing the anchor before the probe, at the session start, or both', () => {
    const variants = anchorVariants({ arm: 'a-anchor', sizes: [40, 150], placements: ['before-probe', 'session-start', 'both'], turns: [0, 2] }, texts);
    expect(variants).toHaveLength(12);
    expect(variants[0]!.label).toBe('ablation:a-anchor:40t:before-probe:0');
    const context = [
      { role: 'user' as const, content: 'PREFIX' },
      { role: 'assistant' as const, content: 'ok' },
    ];
    const at = (placement: 'before-probe' | 'session-start' | 'both', decay: number) =>
      assembleProbeMessages({ system: 'SYS', context, mitigation: 'a-anchor', texts, insertion: variants[0]!.insertion, placement, decay, request: 'PROBE' })
        .map((m) => m.content)
        .join('\n§\n');
    const reminder = variants[0]!.insertion[0]!.content;
    const before = at('before-probe', 0);
    expect(before.indexOf(reminder)).toBeGreaterThan(before.indexOf('PREFIX'));
    const start = at('session-start', 0);
    expect(start.indexOf(reminder)).toBeLessThan(start.indexOf('PREFIX'));
    expect(start.split(reminder)).toHaveLength(2);
    expect(at('both', 0).split(reminder)).toHaveLength(3);
    const decayed = at('before-probe', 2);
    expect(decayed).toContain(texts.decayExchanges[1]![0]);
    expect(decayed.indexOf(texts.decayExchanges[1]![0])).toBeGreaterThan(decayed.indexOf(reminder));
    expect(() => anchorVariants({ arm: 'a-anchor', placements: ['before-probe'], turns: [texts.decayExchanges.length + 1] }, texts)).toThrow(ConfigError);
    expect(() => config({ arms: ['filler'], anchorAblation: { sizes: [50] } })).toThrow(/real arm/);
  });
});

describe('framing and anchor ablations in one run (SIMULATED models)', () => {
  const dir = mkdtempSync(join(tmpdir(), 'echolens-persona-ablations-'));

  it('reports the framing contrast and one row per grid cell; the headline keeps to the first framing', async () => {
    const grid = { sizes: [10, 150], placements: ['before-probe', 'session-start'], turns: [0, 3] };
    const cfg = config({ probes: { categories: ['coding_self'], framing: ['on', 'off'] }, mitigations: ['none', 'a-anchor'], anchorAblation: grid });
    const run = await runPersona(cfg, join(dir, 'both.db'), { progress: false, signal: new AbortController().signal });
    const store = openStore(join(dir, 'both.db'), { readonly: true });
    const report = await personaReport(store, run.runId);
    await store.close();
    const onlyOn = await runPersona(config({ mitigations: ['none', 'a-anchor'] }), join(dir, 'on.db'), {
      progress: false,
      signal: new AbortController().signal,
    });
    const store2 = openStore(join(dir, 'on.db'), { readonly: true });
    const reference = await personaReport(store2, onlyOn.runId);
    await store2.close();
    // Same framed requests, same simulated answers: the headline equals the framed-only run's.
    expect((report.drift[0]!.gap as GapEstimate).estimate).toBeCloseTo((reference.drift[0]!.gap as GapEstimate).estimate, 12);
    expect((report.drift[0]!.gap as GapEstimate).nReal).toBe((reference.drift[0]!.gap as GapEstimate).nReal);
    expect(reference.framing).toEqual([]);
    expect(report.framing).toHaveLength(1);
    const framing = report.framing[0]!;
    expect('error' in framing.framed).toBe(false);
    expect('error' in framing.bare).toBe(false);
    const diff = framing.difference as { estimate: number };
    expect(diff.estimate).toBeCloseTo((framing.bare as GapEstimate).estimate - (framing.framed as GapEstimate).estimate, 9);

    expect(report.anchorAblation).toHaveLength(8);
    expect(report.mitigations.map((m) => m.mitigation)).toEqual(['a-anchor']);
    const row = (size: number, placement: string, turns: number) =>
      report.anchorAblation.find((r) => r.size === size && r.placement === placement && r.turns === turns)!;
    // The simulated target recovers only when the full identity reminder (V0) is present: the 10-token anchor is cut below it.
    expect((row(150, 'before-probe', 0).vsControl as GapEstimate).estimate).toBeGreaterThan(0.5);
    expect(Math.abs((row(10, 'before-probe', 0).vsControl as GapEstimate).estimate)).toBeLessThan(0.3);
    expect(row(150, 'before-probe', 0).tokens).toBeGreaterThanOrEqual(150);
    expect(row(10, 'before-probe', 0).tokens).toBeLessThan(row(150, 'before-probe', 0).tokens);

    // Rendering: the grid's table and its three charts (size, turns since the anchor, placement); the framing table in Markdown.
    const htmlText = String(await sectionsHtml(personaSections(report)));
    expect(htmlText).toContain('id="persona-anchor-ablation"');
    expect(htmlText.match(/<svg/g)?.length ?? 0).toBeGreaterThanOrEqual(3);
    expect(htmlText).toContain('anchor size (tokens of the inserted turns)');
    expect(htmlText).toContain('turns since the anchor');
    const md = sectionsMarkdown(personaSections(report));
    const csv = personaCsvRows(report);
    expect(csv.filter((r) => r[0] === 'anchor_ablation_vs_control')).toHaveLength(8);
    expect(csv.filter((r) => r[0] === 'framing_gap').map((r) => r[4])).toEqual(['framed', 'bare']);
    expect(md).toContain('## Probe framing ablation');
    expect(md).toMatch(/\| sim:persona \| sim:judge \| a-anchor \| 150 \(\d+\) \| session-start \| 3 \|/u);
  });
});
