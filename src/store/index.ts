// The store types the package root re-exports.
export type { RunInfo, OpenStoreOptions } from './run-store.js';
