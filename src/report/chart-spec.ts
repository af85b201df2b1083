/**
 * The chart description the reports build (charts.ts) and the SVG writer
 * draws (svg.ts). It is the small part of the Vega-Lite grammar the reports
 * use, spelled as Vega-Lite spells it: layered views of rule, point, line,
 * area, text and bar marks over linear (quantitative) and band (nominal)
 * scales, with colour and shape legends. Plain data: no library behind it.
 */

export type FieldType = 'quantitative' | 'nominal';

export interface ScaleSpec {
  domain?: readonly (number | string)[];
  range?: readonly string[];
  nice?: boolean;
  zero?: boolean;
}

export interface AxisSpec {
  labelLimit?: number;
  labelAngle?: number;
  format?: string;
}

export interface LegendSpec {
  title?: string | null;
}

export interface ChannelSpec {
  field?: string;
  type?: FieldType;
  /** A constant in pixels (positions) or a literal (text, colour). */
  value?: number | string;
  title?: string | null;
  scale?: ScaleSpec;
  axis?: AxisSpec | null;
  legend?: LegendSpec | null;
  sort?: null;
}

export interface Encoding {
  x?: ChannelSpec;
  x2?: ChannelSpec;
  y?: ChannelSpec;
  y2?: ChannelSpec;
  xOffset?: ChannelSpec;
  yOffset?: ChannelSpec;
  color?: ChannelSpec;
  shape?: ChannelSpec;
  /** Hover and screen-reader text of each mark. */
  description?: ChannelSpec;
  text?: ChannelSpec;
}

export interface MarkSpec {
  type: 'rule' | 'point' | 'line' | 'area' | 'text' | 'bar';
  color?: string;
  filled?: boolean;
  size?: number;
  opacity?: number;
  stroke?: string;
  strokeWidth?: number;
  strokeDash?: readonly number[];
  shape?: string;
  align?: 'left' | 'right' | 'center';
  baseline?: 'top' | 'middle' | 'bottom';
  dx?: number;
  dy?: number;
  fontSize?: number;
  /** false: decorative, hidden from screen readers. */
  aria?: boolean;
}

export type Datum = Record<string, unknown>;

export interface LayerSpec {
  data?: { values: readonly Datum[] };
  transform?: readonly { filter: { field: string; equal: string | number } }[];
  mark: MarkSpec;
  encoding: Encoding;
}

export interface ChartConfig {
  axis?: { labelFontSize?: number; titleFontSize?: number; labelLimit?: number; titleLimit?: number };
  axisQuantitative?: { format?: string };
  axisX?: { tickCount?: number };
  axisY?: { tickCount?: number };
  legend?: { labelFontSize?: number; titleFontSize?: number; labelLimit?: number; symbolSize?: number; columns?: number; orient?: string; direction?: string };
  view?: { stroke?: string | null };
  font?: string;
}

export interface ChartSpec {
  /** Total drawn width in pixels, axes and legends included. */
  width: number;
  /** Height of the plotting area in pixels. */
  height: number;
  autosize?: unknown;
  config?: ChartConfig;
  data?: { values: readonly Datum[] };
  /** A single view (mark + encoding) or layers. */
  mark?: MarkSpec;
  encoding?: Encoding;
  layer?: readonly LayerSpec[];
}
