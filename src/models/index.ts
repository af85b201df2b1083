// Public API of src/models/ (re-exported from the package root).
export { createAdapter, registerReplayAdapter } from './create-adapter.js';
export type { CreateAdapterOptions, ReplayFactory } from './create-adapter.js';
export { formatModelRef, parseModelRef } from './ref.js';
export type { ModelRef } from './ref.js';
export { getProvider, PROVIDERS, providerNames } from './providers.js';
export type { ProviderKind, ProviderSpec } from './providers.js';
export { AiSdkAdapter, mapFinishReason } from './ai-adapter.js';
export type { AdapterOptions } from './ai-adapter.js';
export { DEFAULT_MAX_TOKENS, DEFAULT_STALL_TIMEOUT_MS, DEFAULT_TIMEOUT_MS } from './defaults.js';
export { classifyError, classifyStatus, parseRetryAfter } from './classify.js';
export { deriveSimSeed, SimAdapter } from './sim-adapter.js';
export { ECHO_PROFILE_NAME } from './sim-echo.js';
export { LocalAdapter, NODE_LLAMA_CPP_INSTALL, NODE_LLAMA_CPP_VERSION } from './local-adapter.js';
export type { LocalAdapterOptions } from './local-adapter.js';
export {
  builtInPriceTable,
  costOf,
  findPrice,
  isFreeProvider,
  loadPriceTable,
  mergePriceTables,
  parsePriceTable,
} from './prices.js';
export type { ModelPrice, PriceTable } from './prices.js';
export { estimateCells } from './estimate.js';
export type { EstimateOptions, ModelEstimate, PlanEstimate } from './estimate.js';
export {
  callWithRetry,
  CallFailedError,
  DEFAULT_RETRY_POLICY,
  backoffDelayMs,
  defaultSleep,
  resolveRetryPolicy,
  seededRandom,
} from './retry.js';
export type { CallWithRetryOptions, RetryEvent, RetryPolicy, RetryResult, SleepFn } from './retry.js';
export { createEmbedder, isEmbeddingModelRef } from './embeddings.js';
export type { EmbedderOptions, TextEmbedder } from './embeddings.js';
export {
  BATCH_DISCOUNT,
  batchCost,
  batchEndpointOf,
  batchProviderOf,
  createBatchClient,
  decodeWireResponse,
  wireRequestOf,
} from './batch/index.js';
export type { BatchClient, BatchEndpoint, BatchLine, BatchLineResult, BatchProvider, BatchState, WireRequest } from './batch/index.js';
