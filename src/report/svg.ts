import type { ChannelSpec, ChartSpec, Datum, Encoding, LayerSpec, MarkSpec } from './chart-spec.js';

/**
 * Chart spec → SVG, in plain code: no browser, no canvas, no network and no
 * chart library (text widths are estimated from the character count). Charts
 * are embedded inline in the self-contained HTML report, so they render with
 * JavaScript disabled and under a strict CSP.
 *
 * The output keeps the structure the report's stylesheet and tests read:
 * the root `svg.marks`; axes in `g.role-axis` with their tick texts in
 * `g.role-axis-label` and their title in `g.role-axis-title`; each layer's
 * marks in a `g.role-mark`, every mark with a description carrying it as an
 * `aria-label` and as a `<title>` child (the browser shows it on hover, with
 * no script); legends in `g.role-legend`.
 */
export function chartToSvg(spec: ChartSpec): string {
  return responsiveSvg(draw(spec));
}

/**
 * The root element scales to its container: width 100%, the height following
 * from the viewBox (CSS `height: auto`), the drawn size kept as a `data-width`
 * so a stylesheet or test can read it.
 */
export function responsiveSvg(svg: string): string {
  return svg.replace(/^<svg([^>]*)>/u, (open, attrs: string) => {
    const width = /\swidth="([\d.]+)"/u.exec(attrs)?.[1];
    const height = /\sheight="([\d.]+)"/u.exec(attrs)?.[1];
    if (!width || !height) return open;
    const rest = attrs.replace(/\s(width|height)="[\d.]+"/gu, '');
    const viewBox = rest.includes('viewBox=') ? '' : ` viewBox="0 0 ${width} ${height}"`;
    return `<svg${rest} width="100%" data-width="${width}" data-height="${height}" preserveAspectRatio="xMidYMin meet"${viewBox}>`;
  });
}

// ---------------------------------------------------------------------------

/** Vega's default categorical colours (Tableau 10). */
const COLOURS = ['#4c78a8', '#f58518', '#e45756', '#72b7b2', '#54a24b', '#eeca3b', '#b279a2', '#ff9da6', '#9d755d', '#bab0ac'];
const DEFAULT_SHAPES = ['circle', 'square', 'cross', 'diamond', 'triangle-up', 'triangle-down', 'triangle-right', 'triangle-left'];
const MARK_COLOUR = '#4c78a8';
const AXIS_COLOUR = '#888';
const GRID_COLOUR = '#ddd';
const TEXT_COLOUR = '#000';
const DEFAULT_FONT = 'sans-serif';

const esc = (text: string): string => text.replace(/&/gu, '&amp;').replace(/</gu, '&lt;').replace(/>/gu, '&gt;').replace(/"/gu, '&quot;');
/** A coordinate: two decimals, no trailing zeros. */
const n = (x: number): string => String(Math.round(x * 100) / 100);
/** Estimated width of a text in pixels (no font metrics in Node). */
const textWidth = (text: string, fontSize: number): number => [...text].length * fontSize * 0.58;

function truncate(text: string, limitPx: number, fontSize: number): string {
  if (textWidth(text, fontSize) <= limitPx) return text;
  const chars = [...text];
  const keep = Math.max(1, Math.floor(limitPx / (fontSize * 0.58)) - 1);
  return `${chars.slice(0, keep).join('')}…`;
}

/** d3's tick step for `count` ticks over [lo, hi]: 1, 2 or 5 times a power of ten. */
function tickStep(lo: number, hi: number, count: number): number {
  const raw = Math.abs(hi - lo) / Math.max(1, count);
  if (!(raw > 0) || !Number.isFinite(raw)) return 1;
  const power = 10 ** Math.floor(Math.log10(raw));
  const error = raw / power;
  const factor = error >= Math.sqrt(50) ? 10 : error >= Math.sqrt(10) ? 5 : error >= Math.sqrt(2) ? 2 : 1;
  return factor * power;
}

export function ticks(lo: number, hi: number, count: number): number[] {
  const step = tickStep(lo, hi, count);
  const out: number[] = [];
  for (let i = Math.ceil(lo / step - 1e-9); i <= Math.floor(hi / step + 1e-9); i++) {
    const value = Number((i * step).toPrecision(12));
    out.push(Object.is(value, -0) ? 0 : value);
  }
  return out;
}

/** Tick text: `.0%` (percent) or four significant digits with trailing zeros dropped; a true minus sign. */
export function formatTick(x: number, format?: string): string {
  if (format === '.0%') return `${Math.round(x * 100)}%`.replace('-', '−');
  if (x === 0) return '0';
  const fixed = Number(x.toPrecision(4));
  const abs = Math.abs(fixed);
  const text = abs >= 1e-6 && abs < 1e21 ? fixed.toFixed(Math.max(0, 3 - Math.floor(Math.log10(abs)))).replace(/\.?0+$/u, '') : String(fixed);
  return text.replace('-', '−');
}

// --- symbols (area `size` in square pixels, as in Vega-Lite) ---------------

export function symbolPath(shape: string, size: number): string {
  const r = Math.sqrt(size) / 2;
  switch (shape) {
    case 'square':
      return `M${n(-r)},${n(-r)}h${n(2 * r)}v${n(2 * r)}h${n(-2 * r)}Z`;
    case 'diamond':
      return `M0,${n(-r * 1.2)}L${n(r * 1.2)},0L0,${n(r * 1.2)}L${n(-r * 1.2)},0Z`;
    case 'cross': {
      const a = r / 2.5;
      const b = r * 1.2;
      return `M${n(-b)},${n(-a)}H${n(-a)}V${n(-b)}H${n(a)}V${n(-a)}H${n(b)}V${n(a)}H${n(a)}V${n(b)}H${n(-a)}V${n(a)}H${n(-b)}Z`;
    }
    case 'triangle-up':
    case 'triangle-down':
    case 'triangle-right':
    case 'triangle-left': {
      const h = r * 1.3;
      const points: Array<[number, number]> = [
        [0, -h],
        [h, h * 0.75],
        [-h, h * 0.75],
      ];
      const turn = { 'triangle-up': 0, 'triangle-right': 1, 'triangle-down': 2, 'triangle-left': 3 }[shape];
      const rotated = points.map(([x, y]) => {
        let [px, py] = [x, y];
        for (let i = 0; i < turn; i++) [px, py] = [-py, px];
        return [px, py] as const;
      });
      return `M${rotated.map(([x, y]) => `${n(x)},${n(y)}`).join('L')}Z`;
    }
    case 'wedge':
      return `M0,${n(-r * 1.4)}L${n(r * 0.5)},${n(r * 1.4)}L${n(-r * 0.5)},${n(r * 1.4)}Z`;
    case 'stroke':
      return `M${n(-r * 1.3)},${n(-r / 4)}h${n(2.6 * r)}v${n(r / 2)}h${n(-2.6 * r)}Z`;
    case 'arrow': {
      const w = r / 2.5;
      return `M${n(-w)},${n(r * 1.3)}V${n(-r * 0.2)}H${n(-r)}L0,${n(-r * 1.3)}L${n(r)},${n(-r * 0.2)}H${n(w)}V${n(r * 1.3)}Z`;
    }
    default: {
      const c = Math.sqrt(size / Math.PI);
      return `M${n(c)},0A${n(c)},${n(c)},0,1,1,${n(-c)},0A${n(c)},${n(c)},0,1,1,${n(c)},0Z`;
    }
  }
}

// --- scales ----------------------------------------------------------------

interface Linear {
  kind: 'linear';
  domain: [number, number];
  range: [number, number];
}
interface Band {
  kind: 'band';
  domain: string[];
  range: [number, number];
}
type Scale = Linear | Band;

function project(scale: Scale, value: unknown): number | undefined {
  if (scale.kind === 'linear') {
    const v = Number(value);
    if (!Number.isFinite(v)) return undefined;
    const [d0, d1] = scale.domain;
    const [r0, r1] = scale.range;
    return d1 === d0 ? (r0 + r1) / 2 : r0 + ((v - d0) / (d1 - d0)) * (r1 - r0);
  }
  const i = scale.domain.indexOf(String(value));
  if (i < 0) return undefined;
  return scale.range[0] + (i + 0.5) * bandStep(scale);
}
const bandStep = (scale: Band): number => (scale.range[1] - scale.range[0]) / Math.max(1, scale.domain.length);

interface Layer {
  mark: MarkSpec;
  encoding: Encoding;
  rows: Datum[];
}

function layersOf(spec: ChartSpec): Layer[] {
  const raw: LayerSpec[] = spec.layer ? [...spec.layer] : spec.mark && spec.encoding ? [{ mark: spec.mark, encoding: spec.encoding }] : [];
  return raw.map((l) => {
    let rows = [...(l.data?.values ?? spec.data?.values ?? [])];
    for (const t of l.transform ?? []) rows = rows.filter((r) => r[t.filter.field] === t.filter.equal);
    return { mark: l.mark, encoding: l.encoding, rows };
  });
}

type PositionChannel = 'x' | 'y';

/** Every definition of a channel across layers, with the layer's rows. */
function definitions(layers: readonly Layer[], channel: keyof Encoding): Array<{ def: ChannelSpec; rows: Datum[] }> {
  return layers.flatMap((l) => {
    const def = l.encoding[channel];
    return def ? [{ def, rows: l.rows }] : [];
  });
}

function unique(values: Iterable<unknown>): string[] {
  return [...new Set([...values].map((v) => String(v)))];
}

/** The shared scale of a position channel: explicit domain, else the data's extent (or its categories in order). */
function positionScale(layers: readonly Layer[], channel: PositionChannel, range: [number, number]): Scale | undefined {
  const defs = definitions(layers, channel).filter((d) => d.def.field !== undefined);
  if (defs.length === 0) return undefined;
  const type = defs.find((d) => d.def.type)?.def.type ?? 'quantitative';
  const explicit = defs.find((d) => d.def.scale?.domain)?.def.scale?.domain;
  if (type === 'nominal') {
    const domain = explicit ? explicit.map(String) : unique(defs.flatMap((d) => d.rows.map((r) => r[d.def.field as string])));
    // Categories read top-down and left to right, in the order given.
    return { kind: 'band', domain, range: [Math.min(...range), Math.max(...range)] };
  }
  if (explicit && explicit.length === 2) return { kind: 'linear', domain: [Number(explicit[0]), Number(explicit[1])], range };
  const second = channel === 'x' ? 'x2' : 'y2';
  const values: number[] = [];
  for (const l of layers) {
    for (const c of [l.encoding[channel], l.encoding[second]]) {
      if (c?.field) for (const r of l.rows) values.push(Number(r[c.field]));
    }
  }
  const finite = values.filter(Number.isFinite);
  const zero = defs.every((d) => d.def.scale?.zero !== false) && layers.some((l) => l.mark.type === 'bar');
  let lo = finite.length > 0 ? Math.min(...finite) : 0;
  let hi = finite.length > 0 ? Math.max(...finite) : 1;
  if (zero) [lo, hi] = [Math.min(lo, 0), Math.max(hi, 0)];
  if (lo === hi) [lo, hi] = [lo - 1, hi + 1];
  return { kind: 'linear', domain: [lo, hi], range };
}

/** The title of an axis or legend: the first explicit one (null = none), else the field's name. */
function titleOf(defs: readonly ChannelSpec[], legend = false): string | null {
  for (const d of defs) {
    if (legend && d.legend && 'title' in d.legend) return d.legend.title ?? null;
    if ('title' in d) return d.title ?? null;
  }
  return defs[0]?.field ?? null;
}

interface Ordinal {
  field: string;
  domain: string[];
  range: readonly string[];
}

function ordinal(layers: readonly Layer[], channel: 'color' | 'shape', fallback: readonly string[]): Ordinal | undefined {
  const defs = definitions(layers, channel).filter((d) => d.def.field !== undefined);
  const field = defs[0]?.def.field;
  if (!field) return undefined;
  const same = defs.filter((d) => d.def.field === field);
  const explicit = same.find((d) => d.def.scale?.domain)?.def.scale?.domain;
  const domain = explicit ? explicit.map(String) : unique(same.flatMap((d) => d.rows.map((r) => r[field])));
  const range = same.find((d) => d.def.scale?.range)?.def.scale?.range ?? fallback;
  return { field, domain, range };
}

const pick = (scale: Ordinal | undefined, value: unknown, fallback: string): string => {
  if (!scale) return fallback;
  const i = scale.domain.indexOf(String(value));
  return i < 0 ? fallback : (scale.range[i % scale.range.length] as string);
};

// --- drawing ---------------------------------------------------------------

interface Frame {
  width: number;
  height: number;
  x?: Scale;
  y?: Scale;
  colour?: Ordinal;
  shape?: Ordinal;
  /** The groups placed side by side within each band (xOffset / yOffset), in order. */
  offsets: { x: string[]; y: string[] };
}

/** Position of a datum on one axis: the scale (plus its offset within a band), a constant, or undefined. */
function position(frame: Frame, enc: Encoding, row: Datum, channel: PositionChannel): number | undefined {
  const def = enc[channel];
  if (!def) return undefined;
  if (def.value !== undefined) return Number(def.value);
  const scale = frame[channel];
  if (!scale || !def.field) return undefined;
  const at = project(scale, row[def.field]);
  if (at === undefined || scale.kind !== 'band') return at;
  const offset = enc[channel === 'x' ? 'xOffset' : 'yOffset'];
  if (!offset?.field) return at;
  const groups = frame.offsets[channel];
  const i = groups.indexOf(String(row[offset.field]));
  const inner = bandStep(scale) * 0.8;
  const each = inner / Math.max(1, groups.length);
  return at - inner / 2 + (i + 0.5) * each;
}

function describe(enc: Encoding, row: Datum): string | undefined {
  const field = enc.description?.field;
  return field && row[field] !== undefined ? String(row[field]) : undefined;
}

function aria(label: string | undefined, kind: string): { attrs: string; title: string } {
  if (label === undefined) return { attrs: ' aria-hidden="true"', title: '' };
  const text = esc(label);
  return { attrs: ` aria-label="${text}" role="graphics-symbol" aria-roledescription="${kind}"`, title: `<title>${text}</title>` };
}

function element(tag: string, label: string | undefined, kind: string, attrs: string): string {
  const a = aria(label, kind);
  return a.title ? `<${tag}${a.attrs} ${attrs}>${a.title}</${tag}>` : `<${tag} ${attrs}/>`;
}

function seriesOf(layer: Layer): Map<string, Datum[]> {
  const field = layer.encoding.color?.field;
  const out = new Map<string, Datum[]>();
  for (const row of layer.rows) {
    const key = field ? String(row[field]) : '';
    out.set(key, [...(out.get(key) ?? []), row]);
  }
  return out;
}

function colourOf(frame: Frame, layer: Layer, row: Datum): string {
  if (layer.mark.color) return layer.mark.color;
  const def = layer.encoding.color;
  if (def?.value !== undefined) return String(def.value);
  return def?.field ? pick(frame.colour?.field === def.field ? frame.colour : undefined, row[def.field], MARK_COLOUR) : MARK_COLOUR;
}

function drawLayer(frame: Frame, layer: Layer, index: number, font: string): string {
  const { mark, encoding: enc } = layer;
  const decorative = mark.aria === false;
  const label = (row: Datum) => (decorative ? undefined : describe(enc, row));
  const dash = mark.strokeDash ? ` stroke-dasharray="${mark.strokeDash.join(',')}"` : '';
  const opacity = mark.opacity !== undefined ? ` opacity="${mark.opacity}"` : '';
  const out: string[] = [];
  switch (mark.type) {
    case 'rule': {
      for (const row of layer.rows) {
        const colour = colourOf(frame, layer, row);
        const x = position(frame, enc, row, 'x');
        const y = position(frame, enc, row, 'y');
        const x2 = enc.x2?.field && frame.x ? project(frame.x, row[enc.x2.field]) : undefined;
        const y2 = enc.y2?.field && frame.y ? project(frame.y, row[enc.y2.field]) : undefined;
        let seg: [number, number, number, number] | undefined;
        if (x !== undefined && x2 !== undefined) seg = [x, y ?? frame.height / 2, x2, y ?? frame.height / 2];
        else if (y !== undefined && y2 !== undefined) seg = [x ?? frame.width / 2, y, x ?? frame.width / 2, y2];
        else if (x !== undefined && y === undefined) seg = [x, 0, x, frame.height];
        else if (y !== undefined && x === undefined) seg = [0, y, frame.width, y];
        if (!seg) continue;
        const attrs = `x1="${n(seg[0])}" y1="${n(seg[1])}" x2="${n(seg[2])}" y2="${n(seg[3])}" stroke="${colour}" stroke-width="${mark.strokeWidth ?? 1}"${dash}${opacity}`;
        out.push(element('line', label(row), 'rule mark', attrs));
      }
      break;
    }
    case 'point': {
      for (const row of layer.rows) {
        const x = position(frame, enc, row, 'x');
        const y = position(frame, enc, row, 'y');
        if (x === undefined || y === undefined) continue;
        const colour = colourOf(frame, layer, row);
        const shapeDef = enc.shape;
        const shape =
          mark.shape ?? (shapeDef?.field ? pick(frame.shape?.field === shapeDef.field ? frame.shape : undefined, row[shapeDef.field], 'circle') : 'circle');
        const filled = mark.filled !== false;
        const paint = filled ? `fill="${colour}"` : `fill="none" stroke="${colour}"`;
        const stroke = mark.stroke ? ` stroke="${mark.stroke}"` : '';
        const attrs = `transform="translate(${n(x)},${n(y)})" d="${symbolPath(shape, mark.size ?? 30)}" ${paint}${stroke} stroke-width="${mark.strokeWidth ?? (filled ? 0 : 2)}" opacity="${mark.opacity ?? 1}"`;
        out.push(element('path', label(row), 'point', attrs));
      }
      break;
    }
    case 'line':
    case 'area': {
      for (const [, rows] of seriesOf(layer)) {
        const pts = rows
          .map((row) => ({
            row,
            x: position(frame, enc, row, 'x'),
            y: position(frame, enc, row, 'y'),
            y2: enc.y2?.field && frame.y ? project(frame.y, row[enc.y2.field]) : undefined,
          }))
          .filter((p): p is { row: Datum; x: number; y: number; y2: number | undefined } => p.x !== undefined && p.y !== undefined)
          .sort((a, b) => a.x - b.x);
        if (pts.length === 0) continue;
        const colour = colourOf(frame, layer, pts[0]!.row);
        let d: string;
        if (mark.type === 'line') d = `M${pts.map((p) => `${n(p.x)},${n(p.y)}`).join('L')}`;
        else {
          const top = pts.map((p) => `${n(p.x)},${n(p.y2 ?? p.y)}`);
          const bottom = [...pts].reverse().map((p) => `${n(p.x)},${n(p.y)}`);
          d = `M${[...top, ...bottom].join('L')}Z`;
        }
        const paint = mark.type === 'line' ? `fill="none" stroke="${colour}" stroke-width="${mark.strokeWidth ?? 2}"` : `fill="${colour}"`;
        out.push(element('path', label(pts[0]!.row), `${mark.type} mark`, `d="${d}" ${paint}${dash}${opacity}`));
      }
      break;
    }
    case 'bar': {
      const x = frame.x;
      const y = frame.y;
      if (x?.kind !== 'band' || y?.kind !== 'linear') throw new Error('chart: bars need a nominal x and a quantitative y');
      const base = project(y, Math.max(y.domain[0], Math.min(0, y.domain[1]))) as number;
      const groups = enc.xOffset?.field ? Math.max(1, frame.offsets.x.length) : 1;
      const w = (bandStep(x) * 0.8) / groups;
      for (const row of layer.rows) {
        const cx = position(frame, enc, row, 'x');
        const top = position(frame, enc, row, 'y');
        if (cx === undefined || top === undefined) continue;
        const attrs = `x="${n(cx - w / 2)}" y="${n(Math.min(top, base))}" width="${n(Math.max(0, w - 1))}" height="${n(Math.abs(base - top))}" fill="${colourOf(frame, layer, row)}"${opacity}`;
        out.push(element('rect', label(row), 'bar', attrs));
      }
      break;
    }
    case 'text': {
      const size = mark.fontSize ?? 11;
      const anchor = mark.align === 'left' ? 'start' : mark.align === 'right' ? 'end' : 'middle';
      const shift = mark.baseline === 'top' ? size * 0.8 : mark.baseline === 'bottom' ? 0 : size * 0.35;
      for (const row of layer.rows) {
        const x = position(frame, enc, row, 'x');
        const y = position(frame, enc, row, 'y');
        const text = enc.text?.field ? row[enc.text.field] : enc.text?.value;
        if (x === undefined || y === undefined || text === undefined) continue;
        const a = aria(label(row), 'text mark');
        const colour = mark.color ?? (enc.color ? colourOf(frame, layer, row) : TEXT_COLOUR);
        out.push(
          `<text${a.attrs} text-anchor="${anchor}" transform="translate(${n(x + (mark.dx ?? 0))},${n(y + (mark.dy ?? 0) + shift)})" font-family="${esc(font)}" font-size="${size}px" fill="${colour}">${a.title}${esc(String(text))}</text>`,
        );
      }
      break;
    }
    default:
      throw new Error(`chart: unsupported mark ${String((mark as { type: unknown }).type)}`);
  }
  const hidden = decorative || !enc.description?.field;
  const role = hidden ? ' aria-hidden="true"' : ` role="graphics-object" aria-roledescription="${mark.type} mark container"`;
  return `<g class="mark-${mark.type} role-mark layer_${index}_marks"${role}>${out.join('')}</g>`;
}

/** One axis as Vega draws it: grid, ticks, labels, the domain line (its coordinates given) and the title. */
function axisGroup(axis: 'X' | 'Y', titleText: string | null, p: { grid: string; tickLines: string; labels: string; title: string }, domain: string): string {
  return (
    `<g class="mark-group role-axis" aria-label="${axis}-axis${titleText ? ` titled '${esc(titleText)}'` : ''}"><g class="mark-rule role-axis-grid" aria-hidden="true">${p.grid}</g>` +
    `<g class="mark-rule role-axis-tick" aria-hidden="true">${p.tickLines}</g><g class="mark-text role-axis-label">${p.labels}</g>` +
    `<g class="mark-rule role-axis-domain" aria-hidden="true"><line ${domain} stroke="${AXIS_COLOUR}"/></g>` +
    `<g class="mark-text role-axis-title">${p.title}</g></g>`
  );
}

/** How far (pixels) the widest left-aligned text mark ends beyond the plot's right edge plus its margin. */
function textOverflow(frame: Frame, layers: readonly Layer[], right: number): number {
  let worst = 0;
  for (const layer of layers) {
    if (layer.mark.type !== 'text' || layer.mark.align !== 'left') continue;
    const size = layer.mark.fontSize ?? 11;
    for (const row of layer.rows) {
      const x = position(frame, layer.encoding, row, 'x');
      const text = layer.encoding.text?.field ? row[layer.encoding.text.field] : layer.encoding.text?.value;
      if (x === undefined || text === undefined) continue;
      worst = Math.max(worst, x + (layer.mark.dx ?? 0) + textWidth(String(text), size) - (frame.width + right - 2));
    }
  }
  return worst;
}

interface LegendEntry {
  label: string;
  colour: string;
  shape: string;
}
interface Legend {
  title: string | null;
  entries: LegendEntry[];
}

/** One legend per field shown by colour or shape (a field shown by both gets one legend of coloured shapes). */
function legendsOf(layers: readonly Layer[], frame: Frame): Legend[] {
  const out: Legend[] = [];
  const fields: string[] = [];
  for (const channel of ['color', 'shape'] as const) {
    const scale = channel === 'color' ? frame.colour : frame.shape;
    if (!scale || fields.includes(scale.field)) continue;
    const defs = [...definitions(layers, 'color'), ...definitions(layers, 'shape')].map((d) => d.def).filter((d) => d.field === scale.field);
    if (defs.some((d) => d.legend === null)) continue;
    fields.push(scale.field);
    const colour = frame.colour?.field === scale.field ? frame.colour : undefined;
    const shape = frame.shape?.field === scale.field ? frame.shape : undefined;
    out.push({
      title: titleOf(defs, true),
      entries: scale.domain.map((label) => ({ label, colour: pick(colour, label, AXIS_COLOUR), shape: pick(shape, label, 'circle') })),
    });
  }
  return out;
}

function draw(spec: ChartSpec): string {
  const config = spec.config ?? {};
  const font = config.font ?? DEFAULT_FONT;
  const labelSize = config.axis?.labelFontSize ?? 10;
  const titleSize = config.axis?.titleFontSize ?? 11;
  const legendLabelSize = config.legend?.labelFontSize ?? 10;
  const legendTitleSize = config.legend?.titleFontSize ?? 11;
  const columns = config.legend?.columns ?? 3;
  const symbolSize = config.legend?.symbolSize ?? 90;
  const format = config.axisQuantitative?.format;
  const layers = layersOf(spec);
  const plotHeight = spec.height;

  // The y axis decides the left margin, which decides the plot's width.
  const yProbe = positionScale(layers, 'y', [plotHeight, 0]);
  const yDefs = definitions(layers, 'y').map((d) => d.def);
  const yAxisDef = yDefs.find((d) => d.axis !== undefined)?.axis;
  const yLimit = yAxisDef?.labelLimit ?? config.axis?.labelLimit ?? 200;
  const yFormat = yDefs.find((d) => d.axis?.format)?.axis?.format ?? format;
  const yTicks = yProbe?.kind === 'linear' ? ticks(yProbe.domain[0], yProbe.domain[1], config.axisY?.tickCount ?? 6) : [];
  const yLabels = yProbe?.kind === 'band' ? yProbe.domain.map((t) => truncate(t, yLimit, labelSize)) : yTicks.map((t) => formatTick(t, yFormat));
  const yTitle = yProbe ? titleOf(yDefs.filter((d) => d.field !== undefined)) : null;
  const yLabelWidth = Math.max(0, ...yLabels.map((t) => textWidth(t, labelSize)));
  const left = Math.ceil((yProbe ? yLabelWidth + 9 : 0) + (yTitle ? titleSize + 10 : 0) + 4);
  const right = 14;
  const top = 8;
  const plotWidth = Math.max(40, spec.width - left - right);

  const offsets = (key: 'xOffset' | 'yOffset'): string[] =>
    unique(layers.flatMap((l) => definitions([l], key).flatMap((d) => (d.def.field ? d.rows.map((r) => r[d.def.field as string]) : []))));
  const frame: Frame = {
    width: plotWidth,
    height: plotHeight,
    offsets: { x: offsets('xOffset'), y: offsets('yOffset') },
    ...(yProbe ? { y: yProbe } : {}),
  };
  let xScale = positionScale(layers, 'x', [0, plotWidth]);
  if (xScale) frame.x = xScale;
  // Text marks (point labels) that would run past the right edge narrow the plot so they fit.
  for (let i = 0; xScale && i < 6; i++) {
    const overflow = textOverflow(frame, layers, right);
    if (overflow <= 0 || frame.width <= 40) break;
    frame.width = Math.max(40, frame.width - overflow - 1);
    xScale = positionScale(layers, 'x', [0, frame.width]) as Scale;
    frame.x = xScale;
  }
  const colour = ordinal(layers, 'color', COLOURS);
  if (colour) frame.colour = colour;
  const shape = ordinal(layers, 'shape', DEFAULT_SHAPES);
  if (shape) frame.shape = shape;

  const parts: string[] = [];
  const fontAttr = `font-family="${esc(font)}"`;
  const text = (x: number, y: number, anchor: string, size: number, body: string, style: { bold?: boolean; rotate?: boolean } = {}) =>
    `<text text-anchor="${anchor}" transform="translate(${n(x)},${n(y)})${style.rotate ? ' rotate(-90)' : ''}" ${fontAttr} font-size="${size}px"${style.bold ? ' font-weight="bold"' : ''} fill="${TEXT_COLOUR}">${esc(body)}</text>`;

  // Axes (grid first, so marks draw over it).
  const xDefs = definitions(layers, 'x').map((d) => d.def);
  const xAxisDef = xDefs.find((d) => d.axis !== undefined)?.axis;
  const xFormat = xDefs.find((d) => d.axis?.format)?.axis?.format ?? format;
  const xTitle = xScale ? titleOf(xDefs.filter((d) => d.field !== undefined)) : null;
  let xAxisHeight = 0;
  if (xScale) {
    const xt = xScale.kind === 'linear' ? ticks(xScale.domain[0], xScale.domain[1], config.axisX?.tickCount ?? 8) : [];
    const step = xScale.kind === 'band' ? bandStep(xScale) : 0;
    const xLimit = xScale.kind === 'band' ? Math.min(xAxisDef?.labelLimit ?? config.axis?.labelLimit ?? 200, step) : Number.POSITIVE_INFINITY;
    const marks =
      xScale.kind === 'linear'
        ? xt.map((t) => ({ at: project(xScale, t) as number, label: formatTick(t, xFormat) }))
        : xScale.domain.map((d) => ({ at: project(xScale, d) as number, label: truncate(d, xLimit, labelSize) }));
    const grid =
      xScale.kind === 'linear' ? marks.map((m) => `<line x1="${n(m.at)}" y1="0" x2="${n(m.at)}" y2="${n(plotHeight)}" stroke="${GRID_COLOUR}"/>`).join('') : '';
    const tickLines = marks
      .map((m) => `<line x1="${n(m.at)}" y1="${n(plotHeight)}" x2="${n(m.at)}" y2="${n(plotHeight + 5)}" stroke="${AXIS_COLOUR}"/>`)
      .join('');
    const labels = marks.map((m) => text(m.at, plotHeight + 7 + labelSize, 'middle', labelSize, m.label)).join('');
    xAxisHeight = 7 + labelSize + 4 + (xTitle ? titleSize + 8 : 0);
    const title = xTitle
      ? text(frame.width / 2, plotHeight + 7 + labelSize + 6 + titleSize, 'middle', titleSize, truncate(xTitle, frame.width, titleSize), { bold: true })
      : '';
    parts.push(axisGroup('X', xTitle, { grid, tickLines, labels, title }, `x1="0" y1="${n(plotHeight)}" x2="${n(frame.width)}" y2="${n(plotHeight)}"`));
  }
  if (yProbe) {
    const marks =
      yProbe.kind === 'linear'
        ? yTicks.map((t, i) => ({ at: project(yProbe, t) as number, label: yLabels[i] as string }))
        : yProbe.domain.map((d, i) => ({ at: project(yProbe, d) as number, label: yLabels[i] as string }));
    const grid =
      yProbe.kind === 'linear'
        ? marks.map((m) => `<line x1="0" y1="${n(m.at)}" x2="${n(frame.width)}" y2="${n(m.at)}" stroke="${GRID_COLOUR}"/>`).join('')
        : '';
    const tickLines = marks.map((m) => `<line x1="-5" y1="${n(m.at)}" x2="0" y2="${n(m.at)}" stroke="${AXIS_COLOUR}"/>`).join('');
    const labels = marks.map((m) => text(-7, m.at + labelSize * 0.35, 'end', labelSize, m.label)).join('');
    const title = yTitle
      ? text(-(yLabelWidth + 9 + 6), plotHeight / 2, 'middle', titleSize, truncate(yTitle, plotHeight + 40, titleSize), { bold: true, rotate: true })
      : '';
    parts.push(axisGroup('Y', yTitle, { grid, tickLines, labels, title }, `x1="0" y1="0" x2="0" y2="${n(plotHeight)}"`));
  }

  layers.forEach((layer, i) => {
    parts.push(drawLayer(frame, layer, i, font));
  });

  // Legends under the plot, entries in rows of `columns`.
  let y = plotHeight + xAxisHeight + 10;
  for (const legend of legendsOf(layers, frame)) {
    const limit = config.legend?.labelLimit ?? 200;
    const labels = legend.entries.map((e) => truncate(e.label, limit, legendLabelSize));
    const column = Math.min(frame.width / columns, 22 + Math.max(...labels.map((l) => textWidth(l, legendLabelSize))) + 14);
    const body: string[] = [];
    let row = 0;
    if (legend.title) {
      body.push(`<g class="mark-text role-legend-title">${text(0, legendTitleSize, 'start', legendTitleSize, legend.title, { bold: true })}</g>`);
      row = legendTitleSize + 6;
    }
    legend.entries.forEach((e, i) => {
      const cx = (i % columns) * column;
      const cy = row + Math.floor(i / columns) * (legendLabelSize + 8);
      body.push(
        `<g class="role-legend-entry" transform="translate(${n(cx)},${n(cy)})"><g class="mark-symbol role-legend-symbol"><path transform="translate(6,${n(legendLabelSize / 2 + 1)})" d="${symbolPath(e.shape, symbolSize)}" fill="${e.colour}" stroke="${e.colour}" stroke-width="1"/></g>` +
          `<g class="mark-text role-legend-label">${text(16, legendLabelSize, 'start', legendLabelSize, labels[i] as string)}</g></g>`,
      );
    });
    const height = row + Math.ceil(legend.entries.length / columns) * (legendLabelSize + 8);
    const name = `Legend${legend.title ? ` titled '${esc(legend.title)}'` : ''} with ${legend.entries.length} values: ${esc(legend.entries.map((e) => e.label).join(', '))}`;
    parts.push(
      `<g class="mark-group role-legend" role="graphics-symbol" aria-roledescription="legend" aria-label="${name}" transform="translate(0,${n(y)})">${body.join('')}</g>`,
    );
    y += height + 8;
  }

  const totalHeight = Math.ceil(top + y + 2);
  return (
    `<svg xmlns="http://www.w3.org/2000/svg" class="marks" width="${spec.width}" height="${totalHeight}" viewBox="0 0 ${spec.width} ${totalHeight}">` +
    `<rect width="${spec.width}" height="${totalHeight}" fill="white"/><g fill="none" transform="translate(${left},${top})">${parts.join('')}</g></svg>`
  );
}
