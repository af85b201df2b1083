// The names of src/models/ that the package root and lazy importers (`await import`) use.
export { createAdapter } from './create-adapter.js';
export { formatModelRef, parseModelRef } from './ref.js';
export type { ModelRef } from './ref.js';
export { costOf } from './prices.js';
export { createBatchClient } from './batch/index.js';
export type { BatchClient } from './batch/index.js';
