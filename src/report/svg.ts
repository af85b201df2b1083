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
    return svg.startsWith('<svg') && !svg.includes('xmlns=') ? svg.replace('<svg', '<svg xmlns="http://www.w3.org/2000/svg"') : svg;
  } finally {
    view.finalize();
  }
}
