import type { ChartSpec as TopLevelSpec } from './chart-spec.js';

/**
 * Vega-Lite chart specs used by the reports. Pure: data in, spec out. Rows
 * carry their own labels; the SVG renderer escapes every text mark.
 *
 * Every chart is laid out at CHART_WIDTH pixels in total (`autosize: fit-x`)
 * and the page scales the SVG to its column (svg.ts makes it responsive), so
 * all charts share one size and one font scale. Every data mark carries a
 * `tip` text (its full labels and numbers), which svg.ts turns into an SVG
 * `<title>`: the browser shows it on hover, with no script. Long labels
 * (model names) are shortened on the axes and legends by `shortLabel`; the
 * full text stays in the tip.
 */

export const CHART_WIDTH = 900;

export interface IntervalRow {
  label: string;
  group?: string;
  estimate: number;
  lo: number;
  hi: number;
  /** Hover text (default: label, group, estimate and interval). */
  tip?: string;
}

const AXIS = { labelFontSize: 12, titleFontSize: 13, labelLimit: 320, titleLimit: 800 };
const LEGEND = { labelFontSize: 12, titleFontSize: 12, labelLimit: 320, symbolSize: 90, orient: 'bottom', direction: 'horizontal', columns: 3 };
const BASE = {
  axis: AXIS,
  axisQuantitative: { format: '.4~r' },
  axisX: { tickCount: 8 },
  axisY: { tickCount: 6 },
  legend: LEGEND,
  view: { stroke: null },
  font: 'system-ui, -apple-system, Segoe UI, sans-serif',
};
const FIT = { type: 'fit-x', contains: 'padding' };
/** Point shapes, one per group: every group differs in shape as well as in colour. */
const SHAPES = ['circle', 'square', 'triangle-up', 'cross', 'triangle-down', 'triangle-right', 'triangle-left', 'wedge', 'stroke', 'arrow'];

/** A label of at most `max` characters: the start and the end, joined by an ellipsis. */
export function shortLabel(text: string, max = 34): string {
  const chars = [...text];
  if (chars.length <= max) return text;
  const tail = Math.max(6, Math.floor((max - 1) / 3));
  return `${chars.slice(0, max - 1 - tail).join('')}…${chars.slice(chars.length - tail).join('')}`;
}

/** A number for a tip: three decimals, sign kept. */
export const tipNumber = (x: number): string => (Number.isFinite(x) ? x.toFixed(3) : 'n/a');

/** A quantitative domain that includes `values` (and `include`) with a margin; constant data gets ±1 (or ±10% of its size). */
export function paddedDomain(values: readonly number[], include: readonly number[] = []): [number, number] {
  const all = [...values, ...include].filter((x) => Number.isFinite(x));
  if (all.length === 0) return [-1, 1];
  const lo = Math.min(...all);
  const hi = Math.max(...all);
  if (hi - lo < 1e-9 * Math.max(1, Math.abs(hi))) {
    const half = Math.abs(lo) > 0 ? Math.max(Math.abs(lo) * 0.1, 1e-3) : 1;
    return [lo - half, hi + half];
  }
  const pad = (hi - lo) * 0.05;
  return [lo - pad, hi + pad];
}

/** A chart at the shared width and style: `body` holds its data, marks and layers. */
const chart = (height: number, body: object, width = CHART_WIDTH): TopLevelSpec => ({ width, autosize: FIT, height, config: BASE, ...body }) as TopLevelSpec;

function intervalTip(r: IntervalRow): string {
  return r.tip ?? `${r.label}${r.group ? ` (${r.group})` : ''}: ${tipNumber(r.estimate)} [${tipNumber(r.lo)}, ${tipNumber(r.hi)}]`;
}

/** Horizontal forest plot: one row per label, point estimate and CI, reference rules. */
export function forestSpec(rows: readonly IntervalRow[], options: { xTitle: string; rules?: number[]; width?: number }): TopLevelSpec {
  const grouped = rows.some((r) => r.group);
  const labels = new Set(rows.map((r) => r.label)).size;
  const groups = Math.max(1, new Set(rows.map((r) => r.group)).size);
  const height = Math.max(50, (grouped ? 10 * groups + 8 : 22) * labels);
  const ruleValues = options.rules ?? [0];
  const rules = ruleValues.map((x) => ({ x }));
  const values = rows.map((r) => ({ ...r, axisLabel: shortLabel(r.label, 48), group: r.group ?? '', tip: intervalTip(r) }));
  const domain = paddedDomain(
    rows.flatMap((r) => [r.lo, r.hi, r.estimate]),
    ruleValues,
  );
  const groupLegend = grouped ? { title: null } : null;
  const y = { field: 'axisLabel', type: 'nominal', sort: null, title: null, axis: { labelLimit: 400 } };
  const x = { type: 'quantitative', scale: { domain, nice: false, zero: false } };
  return chart(
    height,
    {
      layer: [
        {
          data: { values: rules },
          mark: { type: 'rule', strokeDash: [4, 3], color: '#8c959f', aria: false },
          encoding: { x: { field: 'x', ...x, title: options.xTitle } },
        },
        {
          data: { values },
          mark: { type: 'rule', strokeWidth: 2.5 },
          encoding: {
            y,
            ...(grouped ? { yOffset: { field: 'group' } } : {}),
            x: { field: 'lo', ...x },
            x2: { field: 'hi' },
            color: { field: 'group', type: 'nominal', legend: groupLegend },
            description: { field: 'tip' },
          },
        },
        {
          data: { values },
          mark: { type: 'point', filled: true, size: 80, opacity: 1 },
          encoding: {
            y,
            ...(grouped ? { yOffset: { field: 'group' } } : {}),
            x: { field: 'estimate', ...x },
            color: { field: 'group', type: 'nominal', legend: groupLegend },
            ...(grouped ? { shape: { field: 'group', type: 'nominal', scale: { range: SHAPES }, legend: groupLegend } } : {}),
            description: { field: 'tip' },
          },
        },
      ],
    },
    options.width,
  );
}

export interface TrajectoryRow {
  series: string;
  x: number;
  estimate: number;
  lo: number;
  hi: number;
}

/** Line over positions with a CI band per series, plus vertical markers (e.g. compactions). */
export function trajectorySpec(
  rows: readonly TrajectoryRow[],
  markers: readonly { x: number; label: string }[],
  options: { xTitle: string; yTitle: string },
): TopLevelSpec {
  const values = rows.map((r) => ({
    ...r,
    seriesLabel: shortLabel(r.series),
    tip: `${r.series} at ${r.x}: ${tipNumber(r.estimate)} [${tipNumber(r.lo)}, ${tipNumber(r.hi)}]`,
  }));
  const yDomain = paddedDomain(
    rows.flatMap((r) => [r.lo, r.hi, r.estimate]),
    [0],
  );
  const xDomain = paddedDomain([...rows.map((r) => r.x), ...markers.map((m) => m.x)]);
  const xEnc = { type: 'quantitative', scale: { domain: xDomain, nice: false, zero: false } };
  const yEnc = { type: 'quantitative', scale: { domain: yDomain, nice: false, zero: false } };
  const series = new Set(rows.map((r) => r.series)).size;
  const colour = { field: 'seriesLabel', type: 'nominal', title: null, legend: series > 1 ? {} : null };
  const layers: unknown[] = [
    {
      data: { values },
      mark: { type: 'area', opacity: 0.18, aria: false },
      encoding: {
        x: { field: 'x', ...xEnc, title: options.xTitle },
        y: { field: 'lo', ...yEnc, title: options.yTitle },
        y2: { field: 'hi' },
        color: colour,
      },
    },
    {
      data: { values },
      mark: { type: 'line', aria: false },
      encoding: { x: { field: 'x', ...xEnc }, y: { field: 'estimate', ...yEnc }, color: colour },
    },
    {
      data: { values },
      mark: { type: 'point', filled: true, size: 60, opacity: 1 },
      encoding: {
        x: { field: 'x', ...xEnc },
        y: { field: 'estimate', ...yEnc },
        color: colour,
        shape: { field: 'seriesLabel', type: 'nominal', scale: { range: SHAPES }, title: null, legend: series > 1 ? {} : null },
        description: { field: 'tip' },
      },
    },
    {
      data: { values: [{ y: 0 }] },
      mark: { type: 'rule', color: '#8c959f', strokeDash: [4, 3], aria: false },
      encoding: { y: { field: 'y', ...yEnc } },
    },
  ];
  if (markers.length > 0) {
    const markerValues = markers.map((m) => ({ ...m, tip: `${m.label}: context compaction at ${m.x}` }));
    layers.push(
      {
        data: { values: markerValues },
        mark: { type: 'rule', color: '#d1242f', strokeDash: [2, 2], strokeWidth: 1.5 },
        encoding: { x: { field: 'x', ...xEnc }, description: { field: 'tip' } },
      },
      {
        data: { values: markerValues },
        mark: { type: 'text', color: '#d1242f', align: 'left', baseline: 'top', dx: 3, dy: 3, fontSize: 12, aria: false },
        encoding: { x: { field: 'x', ...xEnc }, y: { value: 0 }, text: { field: 'label' } },
      },
    );
  }
  return chart(210, { layer: layers });
}

/** Grouped bars (e.g. compliance per arm), value in [0, 1] shown as percent. */
export function barSpec(rows: readonly { label: string; group: string; value: number }[], options: { yTitle: string; percent?: boolean }): TopLevelSpec {
  const values = rows.map((r) => ({
    ...r,
    axisLabel: shortLabel(r.label, 28),
    groupLabel: shortLabel(r.group, 28),
    tip: `${r.label}, ${r.group}: ${options.percent ? `${(100 * r.value).toFixed(1)}%` : tipNumber(r.value)}`,
  }));
  const domain = options.percent
    ? [0, 1]
    : paddedDomain(
        rows.map((r) => r.value),
        [0],
      );
  return chart(180, {
    data: { values },
    mark: { type: 'bar' },
    encoding: {
      x: { field: 'axisLabel', type: 'nominal', title: null, axis: { labelAngle: 0 } },
      xOffset: { field: 'groupLabel' },
      y: {
        field: 'value',
        type: 'quantitative',
        title: options.yTitle,
        scale: { domain, nice: false },
        ...(options.percent ? { axis: { format: '.0%' } } : {}),
      },
      color: { field: 'groupLabel', type: 'nominal', title: null },
      description: { field: 'tip' },
    },
  });
}

/**
 * Scatter of 2-D points: colour and shape from the same group scale (so the
 * legend shows exactly the marks), optional second grouping by shape, and
 * larger outlined centroid diamonds in the colour of their group.
 */
export function scatterSpec(
  points: readonly { x: number; y: number; group: string; shape?: string; tip?: string }[],
  centroids: readonly { x: number; y: number; group: string; tip?: string }[],
  options: { xTitle: string; yTitle: string; groupTitle?: string; shapeTitle?: string },
): TopLevelSpec {
  const byShape = points.some((p) => p.shape !== undefined);
  const pointValues = points.map((p) => ({
    ...p,
    groupLabel: shortLabel(p.group, 30),
    shapeLabel: shortLabel(p.shape ?? p.group, 30),
    tip: p.tip ?? `${p.group}${p.shape ? `, ${p.shape}` : ''}: (${tipNumber(p.x)}, ${tipNumber(p.y)})`,
  }));
  const centroidValues = centroids.map((c) => ({
    ...c,
    groupLabel: shortLabel(c.group, 30),
    tip: c.tip ?? `centroid of ${c.group}: (${tipNumber(c.x)}, ${tipNumber(c.y)})`,
  }));
  const groups = [...new Set([...points, ...centroids].map((p) => shortLabel(p.group, 30)))];
  const x = { type: 'quantitative', scale: { domain: paddedDomain([...points, ...centroids].map((p) => p.x)), nice: false, zero: false } };
  const y = { type: 'quantitative', scale: { domain: paddedDomain([...points, ...centroids].map((p) => p.y)), nice: false, zero: false } };
  const colour = { field: 'groupLabel', type: 'nominal', title: options.groupTitle ?? null, scale: { domain: groups } };
  const layers: unknown[] = [
    {
      data: { values: pointValues },
      mark: { type: 'point', filled: true, size: 60, opacity: 0.7 },
      encoding: {
        x: { field: 'x', ...x, title: options.xTitle },
        y: { field: 'y', ...y, title: options.yTitle },
        color: colour,
        shape: byShape
          ? { field: 'shapeLabel', type: 'nominal', title: options.shapeTitle ?? null, scale: { range: SHAPES } }
          : { field: 'groupLabel', type: 'nominal', title: options.groupTitle ?? null, scale: { domain: groups, range: SHAPES } },
        description: { field: 'tip' },
      },
    },
  ];
  if (centroidValues.length > 0) {
    layers.push({
      data: { values: centroidValues },
      mark: { type: 'point', shape: 'diamond', filled: true, size: 320, stroke: '#1b1f24', strokeWidth: 1.5, opacity: 1 },
      encoding: { x: { field: 'x', ...x }, y: { field: 'y', ...y }, color: colour, description: { field: 'tip' } },
    });
  }
  return chart(290, { layer: layers });
}

/**
 * Scatter whose every point is named on the chart (e.g. conditions: mean DTW
 * against mean SRI), coloured and shaped by a group (e.g. tier).
 */
export function labelledScatterSpec(
  points: readonly { x: number; y: number; label: string; group: string; tip?: string }[],
  options: { xTitle: string; yTitle: string; groupTitle?: string },
): TopLevelSpec {
  // Neighbours (in x, then y) take turns labelling to the right and to the left; on each side,
  // labels closer than a line apart (in pixels of the plot) are pushed apart vertically.
  const height = 290;
  const [yLo, yHi] = paddedDomain(points.map((p) => p.y));
  const toPx = (v: number) => ((yHi - v) / (yHi - yLo)) * height;
  const order = points.map((p, i) => ({ p, i })).sort((a, b) => a.p.x - b.p.x || a.p.y - b.p.y);
  const side = new Map(order.map((o, rank) => [o.i, rank % 2 === 0 ? 'right' : 'left']));
  const labelY = new Map<number, number>();
  for (const where of ['right', 'left']) {
    const placed = points
      .map((p, i) => ({ i, px: toPx(p.y) }))
      .filter((o) => side.get(o.i) === where)
      .sort((a, b) => a.px - b.px);
    let previous = Number.NEGATIVE_INFINITY;
    for (const o of placed) {
      const px = Math.max(o.px, previous + 14);
      previous = px;
      labelY.set(o.i, yHi - (px / height) * (yHi - yLo));
    }
  }
  const values = points.map((p, i) => ({
    ...p,
    text: shortLabel(p.label, 24),
    side: side.get(i),
    labelY: labelY.get(i) ?? p.y,
    tip: p.tip ?? `${p.label} (${p.group}): (${tipNumber(p.x)}, ${tipNumber(p.y)})`,
  }));
  const x = { type: 'quantitative', scale: { domain: paddedDomain(points.map((p) => p.x)), nice: false, zero: false } };
  const y = { type: 'quantitative', scale: { domain: paddedDomain(points.map((p) => p.y)), nice: false, zero: false } };
  const colour = { field: 'group', type: 'nominal', title: options.groupTitle ?? null };
  return chart(height, {
    layer: [
      {
        data: { values },
        mark: { type: 'point', filled: true, size: 110, opacity: 0.9, stroke: '#1b1f24', strokeWidth: 0.8 },
        encoding: {
          x: { field: 'x', ...x, title: options.xTitle },
          y: { field: 'y', ...y, title: options.yTitle },
          color: colour,
          shape: { ...colour, scale: { range: SHAPES } },
          description: { field: 'tip' },
        },
      },
      ...(['right', 'left'] as const).map((where) => ({
        data: { values },
        transform: [{ filter: { field: 'side', equal: where } }],
        mark: {
          type: 'text',
          align: where === 'right' ? 'left' : 'right',
          baseline: 'middle',
          dx: where === 'right' ? 9 : -9,
          fontSize: 12,
          color: '#1b1f24',
          aria: false,
        },
        encoding: { x: { field: 'x', ...x }, y: { field: 'labelY', ...y }, text: { field: 'text' } },
      })),
    ],
  });
}
