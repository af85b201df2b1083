// Fake provider servers for tests (127.0.0.1 only). Not part of the built package.
export { startFakeOpenAI, openAIWire } from './fake-openai.js';
export { startFakeAnthropic, anthropicWire } from './fake-anthropic.js';
export { lastUserText, roughTokens } from './fake-server.js';
export type { FakeToolCall } from './fake-server.js';
export type {
  FakeBehaviour,
  FakeFault,
  FakeOutcome,
  FakeReply,
  FakeRequest,
  FakeServer,
  FakeServerOptions,
} from './fake-server.js';
export { fakeEmbedding, startFakeEmbeddings } from './fake-embeddings.js';
export type { FakeEmbeddingsOptions } from './fake-embeddings.js';
export { startFakeBatch } from './fake-batch.js';
export type { FakeBatchOptions, FakeBatchRecord, FakeBatchServer, FakeLineOutcome } from './fake-batch.js';
export { geminiModelOf, geminiUserText, geminiWire, startFakeGemini } from './fake-gemini.js';
export { bedrockModelOf, bedrockUserText, bedrockWire, eventStreamFrame, startFakeBedrock } from './fake-bedrock.js';
