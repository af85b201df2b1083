// Public API of src/report/ (re-exported from the package root).
export { escapeHtml, html, page, raw } from './html.js';
export { renderReport, collectReports, renderCsvReport, renderHtmlReport, renderJsonReport, renderMarkdownReport } from './report.js';
export type { ExperimentRunReport, ReportFormat, RunAccounting } from './report.js';
export { vegaLiteToSvg } from './svg.js';
export { startViewer } from './viewer/server.js';
export type { ViewerOptions, ViewerServer } from './viewer/server.js';
export { changeFails, compareSeries, seriesHeadline } from './baseline.js';
export type { BaselineOptions, BaselineRow, SeriesHeadline } from './baseline.js';
export type { AuditSeries } from './compare-types.js';
export { baselinePairs, compareToBaseline, storeHistory } from './history.js';
export type { BaselineComparison, BaselinePair, DesignHistory, HistoryEntry } from './history.js';
