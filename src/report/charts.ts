import type { TopLevelSpec } from 'vega-lite';

/**
 * Vega-Lite chart specs used by the reports. Pure: data in, spec out. Rows
 * carry their own labels; the SVG renderer escapes every text mark.
 */

export interface IntervalRow {
  label: string;
  group?: string;
  estimate: number;
  lo: number;
  hi: number;
}

const AXIS = { labelFontSize: 11, titleFontSize: 12, labelLimit: 280 };
const LEGEND = { labelLimit: 280 };

/** Horizontal forest plot: one row per label, point estimate and CI, reference rules. */
export function forestSpec(rows: readonly IntervalRow[], options: { xTitle: string; rules?: number[]; width?: number }): TopLevelSpec {
  const grouped = rows.some((r) => r.group);
  const labels = new Set(rows.map((r) => r.label)).size;
  const groups = Math.max(1, new Set(rows.map((r) => r.group)).size);
  const height = Math.max(60, (grouped ? 12 * groups + 8 : 22) * labels);
  const rules = (options.rules ?? [0]).map((x) => ({ x }));
  return {
    width: options.width ?? 520,
    height,
    config: { axis: AXIS, legend: LEGEND, view: { stroke: null } },
    layer: [
      {
        data: { values: rules },
        mark: { type: 'rule', strokeDash: [4, 3], color: '#8c959f' },
        encoding: { x: { field: 'x', type: 'quantitative' } },
      },
      {
        data: { values: [...rows] },
        mark: { type: 'rule', strokeWidth: 2 },
        encoding: {
          y: { field: 'label', type: 'nominal', sort: null, title: null },
          ...(grouped ? { yOffset: { field: 'group' } } : {}),
          x: { field: 'lo', type: 'quantitative', title: options.xTitle },
          x2: { field: 'hi' },
          color: { field: 'group', type: 'nominal', title: null, legend: rows.some((r) => r.group) ? {} : null },
        },
      },
      {
        data: { values: [...rows] },
        mark: { type: 'point', filled: true, size: 60 },
        encoding: {
          y: { field: 'label', type: 'nominal', sort: null },
          ...(grouped ? { yOffset: { field: 'group' } } : {}),
          x: { field: 'estimate', type: 'quantitative' },
          color: { field: 'group', type: 'nominal', legend: rows.some((r) => r.group) ? {} : null },
          tooltip: [{ field: 'label' }, { field: 'estimate', format: '.3f' }, { field: 'lo', format: '.3f' }, { field: 'hi', format: '.3f' }],
        },
      },
    ],
  } as TopLevelSpec;
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
  const layers: unknown[] = [
    {
      data: { values: [...rows] },
      mark: { type: 'area', opacity: 0.18 },
      encoding: {
        x: { field: 'x', type: 'quantitative', title: options.xTitle },
        y: { field: 'lo', type: 'quantitative', title: options.yTitle },
        y2: { field: 'hi' },
        color: { field: 'series', type: 'nominal', title: null },
      },
    },
    {
      data: { values: [...rows] },
      mark: { type: 'line', point: true },
      encoding: {
        x: { field: 'x', type: 'quantitative' },
        y: { field: 'estimate', type: 'quantitative' },
        color: { field: 'series', type: 'nominal' },
      },
    },
    {
      data: { values: [{ y: 0 }] },
      mark: { type: 'rule', color: '#8c959f', strokeDash: [4, 3] },
      encoding: { y: { field: 'y', type: 'quantitative' } },
    },
  ];
  if (markers.length > 0) {
    layers.push(
      {
        data: { values: [...markers] },
        mark: { type: 'rule', color: '#d1242f', strokeDash: [2, 2] },
        encoding: { x: { field: 'x', type: 'quantitative' } },
      },
      {
        data: { values: [...markers] },
        mark: { type: 'text', color: '#d1242f', align: 'left', dx: 3, dy: -4, fontSize: 10 },
        encoding: { x: { field: 'x', type: 'quantitative' }, y: { value: 0 }, text: { field: 'label' } },
      },
    );
  }
  return { width: 560, height: 240, config: { axis: AXIS, legend: LEGEND }, layer: layers } as TopLevelSpec;
}

/** Grouped bars (e.g. compliance per arm), value in [0, 1] shown as percent. */
export function barSpec(
  rows: readonly { label: string; group: string; value: number }[],
  options: { yTitle: string; percent?: boolean },
): TopLevelSpec {
  return {
    width: { step: 28 },
    height: 200,
    config: { axis: AXIS, legend: LEGEND },
    data: { values: [...rows] },
    mark: 'bar',
    encoding: {
      x: { field: 'label', type: 'nominal', title: null, axis: { labelAngle: -30 } },
      xOffset: { field: 'group' },
      y: {
        field: 'value',
        type: 'quantitative',
        title: options.yTitle,
        ...(options.percent ? { axis: { format: '%' }, scale: { domain: [0, 1] } } : {}),
      },
      color: { field: 'group', type: 'nominal', title: null },
    },
  } as TopLevelSpec;
}

/** Scatter of 2-D points coloured by group, with larger centroid marks. */
export function scatterSpec(
  points: readonly { x: number; y: number; group: string }[],
  centroids: readonly { x: number; y: number; group: string }[],
  options: { xTitle: string; yTitle: string },
): TopLevelSpec {
  return {
    width: 420,
    height: 320,
    config: { axis: AXIS, legend: LEGEND },
    layer: [
      {
        data: { values: [...points] },
        mark: { type: 'point', opacity: 0.45, size: 20 },
        encoding: {
          x: { field: 'x', type: 'quantitative', title: options.xTitle },
          y: { field: 'y', type: 'quantitative', title: options.yTitle },
          color: { field: 'group', type: 'nominal', title: null },
        },
      },
      {
        data: { values: [...centroids] },
        mark: { type: 'point', shape: 'diamond', filled: true, size: 220, stroke: '#1b1f24', strokeWidth: 1 },
        encoding: {
          x: { field: 'x', type: 'quantitative' },
          y: { field: 'y', type: 'quantitative' },
          color: { field: 'group', type: 'nominal' },
        },
      },
    ],
  } as TopLevelSpec;
}
