export { createBatchClient } from './clients.js';
export type {
  BatchClient,
  BatchCounts,
  BatchInput,
  BatchLine,
  BatchLineResult,
  BatchResults,
  BatchState,
  BatchTag,
  InvalidResultLine,
  ListedBatch,
} from './clients.js';
export { batchEndpointOf, batchProviderOf, decodeWireResponse, wireRequestOf } from './wire-body.js';
export type { BatchEndpoint, BatchProvider, WireRequest } from './wire-body.js';
export { BATCH_DISCOUNT, batchCost } from '../batch-prices.js';
