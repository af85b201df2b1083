import { Error as VegaErrorLevel, logger, parse as parseVega, View } from 'vega';
import { compile, type TopLevelSpec } from 'vega-lite';

/**
 * Vega-Lite → SVG in Node, with no browser, no canvas and no network (text
 * widths are estimated). Charts are embedded inline in the self-contained HTML
 * report, so they render with JavaScript disabled and under a strict CSP.
 */
export async function vegaLiteToSvg(spec: TopLevelSpec): Promise<string> {
  // Warnings go nowhere: a report must not print library chatter; real errors still throw.
  const quiet = logger(VegaErrorLevel);
  const vegaSpec = compile(spec, { logger: quiet }).spec;
  const view = new View(parseVega(vegaSpec), { renderer: 'none', logLevel: VegaErrorLevel });
  try {
    const svg = await view.toSVG();
    return responsiveSvg(markTitles(svg.startsWith('<svg') && !svg.includes('xmlns=') ? svg.replace('<svg', '<svg xmlns="http://www.w3.org/2000/svg"') : svg));
  } finally {
    view.finalize();
  }
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

/**
 * Every data mark Vega labels for screen readers (`aria-label`, from the
 * spec's `description` channel) also gets that text as an SVG `<title>` child,
 * which browsers show as a tooltip on hover, with no script. The label is
 * already escaped by Vega's SVG writer, so it is valid element text as is.
 */
export function markTitles(svg: string): string {
  return svg.replace(
    /<(path|rect|line|circle|text)((?:\s[\w:-]+="[^"]*")*?)\s+aria-label="([^"]*)"((?:\s[\w:-]+="[^"]*")*)\s*\/>/gu,
    (_all, tag: string, before: string, label: string, after: string) => `<${tag}${before} aria-label="${label}"${after}><title>${label}</title></${tag}>`,
  );
}
