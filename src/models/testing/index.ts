// Fake provider servers for tests (127.0.0.1 only). Not part of the built package.
export { startFakeOpenAI } from './fake-openai.js';
export { startFakeAnthropic } from './fake-anthropic.js';
export { lastUserText } from './fake-server.js';
export type { FakeFault, FakeRequest, FakeServer, FakeServerOptions, FakeToolCall } from './fake-server.js';
export { startFakeBatch } from './fake-batch.js';
export type { FakeBatchOptions, FakeBatchServer } from './fake-batch.js';
export { startFakeGemini } from './fake-gemini.js';
export { startFakeBedrock } from './fake-bedrock.js';
