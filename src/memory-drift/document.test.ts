import { describe, expect, it } from 'vitest';
import { analyzeMemory, type MemoryObservation } from './analysis.js';
import type { PerturbationTier } from './perturbations.js';
import { labelerReliability } from './reliability.js';
import { markdownText as markdownCell } from '../report/markdown-text.js';
import { renderLabelerCheckMarkdown, renderMemoryMarkdown } from './document.js';
import { rng } from '../stats/rng.js';

const HOSTILE = 'evil | target\n# injected <b>';

function observations(): MemoryObservation[] {
  const random = rng(3);
  const conditions: Array<[string, PerturbationTier, number]> = [
    ['no_perturbation', 'none', 0],
    ['filler', 'noise', 0],
    ['whitespace', 'noise', 0],
    ['punctuation', 'noise', 0],
    ['gender', 'persona', 0.06],
    ['age | old\nline', 'persona', 0.05],
    ['bereavement', 'life_event', 0.15],
  ];
  const out: MemoryObservation[] = [];
  for (let q = 0; q < 30; q++) {
    for (const [condition, tier, shift] of conditions) {
      for (let s = 0; s < 3; s++) {
        const dtw = 0.2 + shift + 0.05 * (random.next() - 0.5);
        out.push({
          target: HOSTILE,
          question: `q${q}`,
          domain: 'd',
          condition,
          tier,
          stimulus: 's',
          sample: s,
          status: 'scored',
          baselineSymbols: ['A'],
          symbols: ['A', 'unmapped'],
          dtw,
          sri: 0.05 + 0.6 * dtw + 0.01 * random.next(),
          baselines: 1,
        });
      }
    }
  }
  out.push({ ...out[0]!, status: 'empty', dtw: null, sri: null, symbols: null });
  return out;
}

describe('renderMemoryMarkdown', () => {
  const report = analyzeMemory(observations(), { B: 200 });
  const markdown = renderMemoryMarkdown(report);

  it('renders every section and table of the report', () => {
    for (const heading of [
      '# Memory drift (DriftLens) report',
      '## Observations, dropouts and label quality',
      '### Instrument validity (§3):',
      '### Convergent validity (Table 1)',
      '### DTW',
      '### SRI',
      '#### DTW: conditions (Fig. 3, Fig. 5)',
      '#### SRI: d_rel per category (Fig. 4)',
      '#### DTW: mixed model',
      '#### SRI: pairwise Welch t-tests (BH-corrected)',
      '#### DTW: tiers (pooled)',
    ]) {
      expect(markdown).toContain(heading);
    }
    expect(markdown).toContain('| Specificity | ');
    expect(markdown).toContain('| Sensitivity | PASS |');
    expect(markdown).toContain('| (Intercept) |');
    expect(markdown).toContain('Over 6 conditions: Spearman ρ = ');
    expect(markdown).toContain('Tiers by ascending mean: DTW noise < persona < life_event; SRI noise < persona < life_event (same order).');
    // Numbers of the report appear verbatim in their formatted form.
    const floor = report.targets[0]!.metrics.dtw.floor;
    if ('error' in floor) throw new Error(floor.error);
    expect(markdown).toContain(`mean ${floor.mean.toFixed(4)}`);
    const bereavement = report.targets[0]!.metrics.sri.dRel.find((e) => e.condition === 'bereavement')!.result;
    if ('error' in bereavement) throw new Error(bereavement.error);
    expect(markdown).toContain(`+${bereavement.dRel.toFixed(2)} [`);
    // Counts: one dropout among the 91 floor observations, half the steps unmapped.
    expect(markdown).toMatch(/\| no_perturbation \| none \| 91 \| 90 \| 1 \| 0 \| 0 \| 0 \| 1\.1% \| 0\.0% \| 180 \| 50\.0% \|/);
    expect(markdown).toMatch(
      /Minimum detectable effect at 80 % power \(α = 0\.05, from this run's bootstrap standard errors\): DTW: elevation \d+\.\d %, d_rel \d\.\d\d/,
    );
    expect(markdown).not.toContain('Underpowered');
  });

  it('says underpowered instead of listing significance below the minimum number of questions', () => {
    const small = analyzeMemory(
      observations().filter((o) => Number(o.question.slice(1)) < 8),
      { B: 200 },
    );
    const target = small.targets[0]!;
    expect(target.design).toMatchObject({ nQuestions: 8, underpowered: true });
    const text = renderMemoryMarkdown(small);
    expect(text).toContain('**Underpowered design.** underpowered: 8 question(s)');
    expect(text).toContain('| underpowered |');
    expect(text).not.toMatch(/\| (yes|no) \| [\d.]+ \| [\d.]+ \| [\d.]+ \| 8 \|/);
    for (const entry of target.metrics.dtw.dRel) {
      if ('error' in entry.result) continue;
      expect(entry.result).toMatchObject({ significant: false, verdict: 'underpowered' });
    }
  });

  it('escapes untrusted labels in cells and headings', () => {
    expect(markdown).toContain('## evil \\| target # injected \\<b\\>');
    expect(markdown).not.toMatch(/&(lt|gt|amp);/u);
    expect(markdown).not.toContain('<b>');
    expect(markdown).not.toMatch(/^# injected/mu);
    expect(markdown).toContain('| age \\| old line | persona |');
    // Every table row has the same number of unescaped pipes as its header.
    for (const block of markdown.split('\n\n')) {
      const lines = block.split('\n').filter((line) => line.startsWith('|'));
      if (lines.length === 0) continue;
      const pipes = (line: string) => line.replace(/\\\\/gu, '').replace(/\\\|/gu, '').split('|').length;
      for (const line of lines) expect(pipes(line)).toBe(pipes(lines[0]!));
    }
  });

  it('shows errors as n/a with the reason', () => {
    const sparse = analyzeMemory(
      observations().filter((o) => o.condition !== 'no_perturbation'),
      { B: 200 },
    );
    const text = renderMemoryMarkdown(sparse);
    expect(text).toContain("n/a (the floor condition 'no_perturbation' has no scored observations)");
    expect(text).toContain('UNDETERMINED');
  });

  it('escapes backslashes before pipes', () => {
    expect(markdownCell('a\\|b')).toBe('a\\\\\\|b');
    expect(markdownCell('x\r\ny')).toBe('x y');
  });
});

describe('renderLabelerCheckMarkdown', () => {
  it('renders the three agreement tables with escaped labeler names', () => {
    const steps = (labeler: string, labels: string[], run = 1, wording = 'original') =>
      labels.map((label, step) => ({ item: 'r1', step, labeler, run, wording, label }));
    const reliability = labelerReliability([
      ...steps('qwen', ['A', 'B', 'B', 'A']),
      ...steps('claude|x', ['A', 'B', 'A', 'A']),
      ...steps('qwen', ['A', 'B', 'B', 'B'], 2),
      ...steps('qwen', ['A', 'A', 'A', 'A'], 1, 'rewritten'),
    ]);
    const check = {
      checkRunId: 'c1',
      memoryRunId: 'm1',
      check: { run: 'm1', labelers: [], repeat: true, altOntology: null, limit: null, seed: 1 },
      records: [],
      passes: [],
    };
    const text = renderLabelerCheckMarkdown(check, reliability);
    expect(text).toContain('## Cross-model agreement (Table 9)');
    expect(text).toContain('| claude\\|x | qwen | original | 1 | 4 | 75.00% | 0.500 | 0 | 0 |');
    expect(text).toContain('| qwen | original | 1 | 2 | 4 | 75.00% |');
    expect(text).toMatch(/\| qwen \| 1 \| original \| rewritten \| 4 \| 50\.00% \| 0\.000 \|/);
    expect(text).toContain('Mean pairwise exact agreement (original, 1, 1 pairs): 75.00%.');
  });
});
