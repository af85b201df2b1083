// Public API of src/report/ (re-exported from the package root).
export {};
export { startViewer } from './viewer/server.js';
export type { ViewerOptions, ViewerServer } from './viewer/server.js';
