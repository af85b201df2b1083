import { describe, expect, it } from 'vitest';
import { barSpec, CHART_WIDTH, forestSpec, labelledScatterSpec, paddedDomain, scatterSpec, shortLabel, trajectorySpec } from './charts.js';
import { chartToSvg, formatTick, responsiveSvg, ticks } from './svg.js';

const tickLabels = (svg: string): string[] => {
  const axes = svg.split('role-axis-label').slice(1);
  return axes.flatMap((part) => [...part.split('role-axis-title')[0]!.matchAll(/<text[^>]*>([^<]*)<\/text>/gu)].map((m) => m[1]!));
};

describe('chart helpers', () => {
  it('shortens long labels from both ends and leaves short ones alone', () => {
    expect(shortLabel('sim:persona')).toBe('sim:persona');
    const long = 'openai:gpt-4.1-mini-2025-04-14@http://127.0.0.1:9999/v1';
    const short = shortLabel(long, 30);
    expect([...short].length).toBe(30);
    expect(short.startsWith('openai:gpt-4.1')).toBe(true);
    expect(short.endsWith('9999/v1')).toBe(true);
    expect(short).toContain('…');
  });

  it('gives constant data a domain of non-zero width', () => {
    expect(paddedDomain([0, 0, 0])).toEqual([-1, 1]);
    const [lo, hi] = paddedDomain([2, 2]);
    expect(lo).toBeLessThan(2);
    expect(hi).toBeGreaterThan(2);
    expect(paddedDomain([], [])).toEqual([-1, 1]);
    const [a, b] = paddedDomain([0, 10], [-1]);
    expect(a).toBeLessThan(-1);
    expect(b).toBeGreaterThan(10);
  });

  it('makes the root SVG responsive and keeps its drawn size', () => {
    const out = responsiveSvg('<svg class="marks" width="900" height="120" viewBox="0 0 900 120"><g/></svg>');
    expect(out).toMatch(/^<svg class="marks" viewBox="0 0 900 120" width="100%" data-width="900" data-height="120"/u);
    expect(out).not.toMatch(/\s(width|height)="(900|120)"/u);
  });
});

describe('rendered charts', () => {
  it('an all-zero trajectory gets round tick labels (no 0.000000) and titled points', async () => {
    const rows = [10, 20, 30].map((x) => ({ series: 'sim:persona · sim:judge', x, estimate: 0, lo: 0, hi: 0 }));
    const svg = chartToSvg(trajectorySpec(rows, [{ x: 15, label: 'C1' }], { xTitle: 'position', yTitle: 'Δ' }));
    const ticks = tickLabels(svg);
    expect(ticks.length).toBeGreaterThan(3);
    for (const t of ticks) expect(t).not.toMatch(/\.\d{4,}/u);
    expect(ticks).toContain('0');
    expect(svg.match(/<title>sim:persona · sim:judge at \d+: 0\.000/gu)?.length).toBe(3);
    expect(svg).toContain('width="100%"');
    expect(svg).toContain(`data-width="${CHART_WIDTH}"`);
  });

  it('a forest plot keeps the full model name in each mark title and shortens it on the axis', async () => {
    const long = 'anthropic:claude-3-5-sonnet-20241022-with-a-very-long-suffix';
    const svg = chartToSvg(forestSpec([{ label: long, estimate: 0.5, lo: 0.1, hi: 0.9 }], { xTitle: 'Δ' }));
    expect(svg).toContain(`<title>${long}: 0.500 [0.100, 0.900]</title>`);
    expect(svg).toContain(shortLabel(long, 48));
    expect(svg).not.toMatch(new RegExp(`<text[^>]*>${long}</text>`, 'u'));
  });

  it('the fingerprint scatter draws every group in its own shape and colour, and the legend lists those groups', async () => {
    const points = [
      { x: 1, y: 2, group: 'real/none', shape: 'target-a' },
      { x: 1.2, y: 2.1, group: 'real/none', shape: 'target-b' },
      { x: -1, y: 0, group: 'filler/none', shape: 'target-a' },
      { x: -1.1, y: 0.2, group: 'filler/none', shape: 'target-b' },
    ];
    const svg = chartToSvg(
      scatterSpec(points, [{ x: 1.1, y: 2, group: 'real/none' }], { xTitle: 'PC1', yTitle: 'PC2', groupTitle: 'arm', shapeTitle: 'target' }),
    );
    const marks = [...svg.matchAll(/<path aria-label="([^"]*)"[^>]*d="([^"]+)"[^>]*fill="([^"]+)"/gu)].map((m) => ({ label: m[1]!, d: m[2]!, fill: m[3]! }));
    const pointMarks = marks.filter((m) => !m.label.startsWith('centroid'));
    expect(pointMarks.length).toBe(4);
    // Two targets: two different shapes; two arms: two different colours.
    const shapeOf = (target: string) => new Set(pointMarks.filter((m) => m.label.includes(target)).map((m) => m.d));
    expect([...shapeOf('target-a')].some((d) => shapeOf('target-b').has(d))).toBe(false);
    const colourOf = (group: string) => new Set(pointMarks.filter((m) => m.label.startsWith(group)).map((m) => m.fill));
    expect(colourOf('real/none').size).toBe(1);
    expect([...colourOf('real/none')][0]).not.toBe([...colourOf('filler/none')][0]);
    // The centroid takes its group's colour.
    expect(marks.find((m) => m.label.startsWith('centroid'))?.fill).toBe([...colourOf('real/none')][0]);
    const legend = svg.slice(svg.indexOf('role-legend'));
    for (const name of ['real/none', 'filler/none', 'target-a', 'target-b', 'arm', 'target']) expect(legend).toContain(`>${name}<`);
  });

  it('the convergent-validity scatter names every point, with axis titles and filled marks', async () => {
    const points = [
      { x: 0.05, y: 0.06, label: 'whitespace', group: 'pragmatic noise' },
      { x: 0.34, y: 0.39, label: 'age', group: 'persona cues' },
      { x: 0.62, y: 0.65, label: 'job_loss', group: 'life events' },
    ];
    const svg = chartToSvg(labelledScatterSpec(points, { xTitle: 'mean DTW drift', yTitle: 'mean SRI drift', groupTitle: 'tier' }));
    for (const p of points) expect(svg).toMatch(new RegExp(`<text[^>]*>${p.label}</text>`, 'u'));
    expect(svg).toContain('>mean DTW drift<');
    expect(svg).toContain('>mean SRI drift<');
    expect(svg.match(/<title>/gu)?.length).toBe(3);
    const fills = [...svg.matchAll(/<path aria-label="[^"]*"[^>]*fill="([^"]+)"[^>]*opacity="([\d.]+)"/gu)];
    expect(fills.length).toBe(3);
    for (const f of fills) expect(Number(f[2])).toBeGreaterThanOrEqual(0.8);
  });
});

describe('the SVG writer', () => {
  it('places ticks at 1, 2 or 5 times a power of ten and prints them with four significant digits and a true minus', () => {
    expect(ticks(-0.15, 0.95, 8)).toEqual([-0.1, 0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9]);
    expect(ticks(0, 1, 6)).toEqual([0, 0.2, 0.4, 0.6, 0.8, 1]);
    expect(ticks(3, 47, 8)).toEqual([5, 10, 15, 20, 25, 30, 35, 40, 45]);
    expect(formatTick(-0.1)).toBe('\u22120.1');
    expect(formatTick(0.1 + 0.2)).toBe('0.3');
    expect(formatTick(1234.5)).toBe('1235');
    expect(formatTick(0.000123456)).toBe('0.0001235');
    expect(formatTick(0.5, '.0%')).toBe('50%');
  });

  it('escapes hostile labels in marks, titles, axes and legends', () => {
    const label = '<img src=x onerror="alert(1)">';
    const svg = chartToSvg(
      forestSpec(
        [
          { label, group: 'a & "b"', estimate: 0, lo: -1, hi: 1 },
          { label: 'ok', group: 'c', estimate: 0, lo: -1, hi: 1 },
        ],
        { xTitle: '<b>x</b>' },
      ),
    );
    expect(svg).not.toContain('<img');
    expect(svg).not.toContain('<b>');
    expect(svg).toContain('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;');
    expect(svg).toContain('>a &amp; &quot;b&quot;<');
    expect(svg).toContain('>&lt;b&gt;x&lt;/b&gt;<');
  });

  it('lists nominal rows top-down in the order given', () => {
    const svg = chartToSvg(
      forestSpec(
        ['first', 'second', 'third'].map((label, i) => ({ label, estimate: i, lo: i - 1, hi: i + 1 })),
        { xTitle: 'x' },
      ),
    );
    const y = (label: string) => Number(new RegExp(`translate\\(-7,([\\d.]+)\\)[^>]*>${label}<`, 'u').exec(svg)?.[1]);
    expect(y('first')).toBeLessThan(y('second'));
    expect(y('second')).toBeLessThan(y('third'));
  });

  it('draws one bar per row, as tall as its share of the percent axis', () => {
    const svg = chartToSvg(
      barSpec(
        [
          { label: 'S1', group: 'real', value: 0.8 },
          { label: 'S1', group: 'filler', value: 0.4 },
          { label: 'S2', group: 'real', value: 0 },
        ],
        { yTitle: 'compliance', percent: true },
      ),
    );
    const bars = [...svg.matchAll(/<rect aria-label="([^"]*)"[^>]*height="([\d.]+)"/gu)].map((m) => ({ label: m[1]!, height: Number(m[2]) }));
    expect(bars.map((b) => b.label)).toEqual(['S1, real: 80.0%', 'S1, filler: 40.0%', 'S2, real: 0.0%']);
    expect(bars[0]!.height / bars[1]!.height).toBeCloseTo(2, 1);
    expect(bars[2]!.height).toBe(0);
    expect(tickLabels(svg)).toEqual(expect.arrayContaining(['0%', '20%', '100%', 'S1', 'S2']));
  });

  it('narrows the plot so a point label at the right edge stays inside the drawing', () => {
    const svg = chartToSvg(
      labelledScatterSpec(
        [
          { x: 0, y: 0, label: 'a', group: 'g' },
          { x: 0.5, y: 0.5, label: 'b', group: 'g' },
          { x: 1, y: 1, label: 'a-rather-long-label', group: 'g' },
        ],
        { xTitle: 'x', yTitle: 'y' },
      ),
    );
    const left = Number(/<g fill="none" transform="translate\(([\d.]+),/u.exec(svg)?.[1]);
    const text = /<text[^>]*text-anchor="start" transform="translate\(([\d.]+),[^)]*\)"[^>]*font-size="(\d+)px"[^>]*>a-rather-long-label</u.exec(svg);
    expect(text).not.toBeNull();
    const end = left + Number(text![1]) + 'a-rather-long-label'.length * Number(text![2]) * 0.58;
    expect(end).toBeLessThanOrEqual(CHART_WIDTH);
  });
});
