import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { preflightProblems } from '../experiment/preflight.js';
import { createAdapter } from './create-adapter.js';
import { type FakeServer, startFakeBedrock, startFakeGemini } from './testing/index.js';
import { GENEROUS_TIMEOUTS, helloRequest, rejectionOf, thrownBy } from './testing/harness.js';

/**
 * Gemini API, Vertex AI and Amazon Bedrock through their AI SDK packages,
 * against local servers speaking their wire formats: the URL each builds,
 * the credential it sends, the body, and the answer and usage mapped back,
 * both as JSON and streamed.
 */

const request = (model: string) => helloRequest(model, { params: { temperature: 0.2, maxTokens: 64 } });
const reply = { text: 'Hello there, friend.', usage: { inputTokens: 21, outputTokens: 5 }, chunkSize: 6 };

let gemini: FakeServer;
let bedrock: FakeServer;
let root: string;
let awsRoot: string;
beforeAll(async () => {
  gemini = await startFakeGemini({ respond: reply });
  bedrock = await startFakeBedrock({ respond: reply });
  root = gemini.baseURL.replace(/\/v1$/, '');
  awsRoot = bedrock.baseURL.replace(/\/v1$/, '');
});
afterAll(async () => {
  await gemini.close();
  await bedrock.close();
});

async function call(server: FakeServer, ref: string, env: Record<string, string>, stream: boolean) {
  const adapter = createAdapter(ref, { env, ...GENEROUS_TIMEOUTS, stream });
  const before = server.requests.length;
  const deltas: string[] = [];
  const response = await adapter.generate(request(ref), stream ? { onDelta: (d) => deltas.push(d) } : {});
  expect(server.requests.length).toBe(before + 1);
  return { response, sent: server.requests[before]!, deltas };
}

describe.each([false, true])('google: (Gemini API), stream=%s', (stream) => {
  const KEY = 'AIza-test-SECRET-gemini';
  it('posts generateContent with the key header and maps the answer', async () => {
    const { response, sent, deltas } = await call(
      gemini,
      'google:gemini-2.5-flash',
      { GOOGLE_GENERATIVE_AI_API_KEY: KEY, GOOGLE_GENERATIVE_AI_BASE_URL: `${root}/v1beta` },
      stream,
    );
    expect(response.text).toBe('Hello there, friend.');
    expect(response.usage).toMatchObject({ inputTokens: 21, outputTokens: 5 });
    expect(response.finishReason).toBe('stop');
    const [path, query] = sent.path.split('?');
    expect(path).toBe(`/v1beta/models/gemini-2.5-flash:${stream ? 'streamGenerateContent' : 'generateContent'}`);
    if (stream) {
      expect(query).toBe('alt=sse');
      expect(deltas.join('')).toBe('Hello there, friend.');
      expect(deltas.length).toBeGreaterThan(1);
    }
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
    const body = sent.body as {
      contents: Array<{ role: string; parts: Array<{ text: string }> }>;
      systemInstruction: { parts: Array<{ text: string }> };
      generationConfig: { temperature: number; maxOutputTokens: number };
    };
    expect(body.systemInstruction.parts[0]?.text).toBe('You are terse.');
    expect(body.contents).toEqual([{ role: 'user', parts: [{ text: 'Say hello.' }] }]);
    expect(body.generationConfig).toMatchObject({ temperature: 0.2, maxOutputTokens: 64 });
  });
});

describe('google: keys', () => {
  it('needs GOOGLE_GENERATIVE_AI_API_KEY, and preflight says so', () => {
    const error = thrownBy(() => createAdapter('google:gemini-2.5-flash', { env: {} }));
    expect(error.kind).toBe('auth');
    expect(error.message).toContain('GOOGLE_GENERATIVE_AI_API_KEY');
    const problems = preflightProblems({ models: [{ ref: 'google:gemini-2.5-flash', field: 'targets.0' }], env: {} });
    expect(problems.map((p) => p.message).join('\n')).toContain('GOOGLE_GENERATIVE_AI_API_KEY');
  });
  it('the reference base URL wins over the default', () => {
    const adapter = createAdapter(`google:gemini-2.5-flash@${root}/v1beta`, { env: { GOOGLE_GENERATIVE_AI_API_KEY: 'k' } });
    expect((adapter as unknown as { baseURL: string }).baseURL).toBe(`${root}/v1beta`);
  });
});

describe.each([false, true])('vertex:, stream=%s', (stream) => {
  it('builds the project/location URL and sends the access token as a bearer', async () => {
    const TOKEN = 'ya29.test-SECRET-token';
    const { response, sent, deltas } = await call(
      gemini,
      `vertex:gemini-2.5-pro@${root}`,
      { GOOGLE_VERTEX_PROJECT: 'my-proj', GOOGLE_VERTEX_LOCATION: 'europe-west4', GOOGLE_VERTEX_ACCESS_TOKEN: TOKEN },
      stream,
    );
    expect(response.text).toBe('Hello there, friend.');
    expect(response.usage).toMatchObject({ inputTokens: 21, outputTokens: 5 });
    expect(sent.path.split('?')[0]).toBe(
      `/v1beta1/projects/my-proj/locations/europe-west4/publishers/google/models/gemini-2.5-pro:${stream ? 'streamGenerateContent' : 'generateContent'}`,
    );
    if (stream) expect(deltas.join('')).toBe('Hello there, friend.');
    expect(sent.headers.authorization).toBe(`Bearer ${TOKEN}`);
    expect((sent.body as { contents: unknown[] }).contents).toEqual([{ role: 'user', parts: [{ text: 'Say hello.' }] }]);
  });
});

describe('vertex: configuration', () => {
  it('express mode: an API key, the /v1/publishers/google path, the key header', async () => {
    const KEY = 'vertex-test-SECRET-express';
    const { response, sent } = await call(gemini, 'vertex:gemini-2.5-flash', { GOOGLE_VERTEX_API_KEY: KEY, GOOGLE_VERTEX_BASE_URL: root }, false);
    expect(response.text).toBe('Hello there, friend.');
    expect(sent.path).toBe('/v1/publishers/google/models/gemini-2.5-flash:generateContent');
    expect(sent.headers['x-goog-api-key']).toBe(KEY);
  });
  it('the default host follows the location', () => {
    const host = (location: string) =>
      (
        createAdapter('vertex:gemini-2.5-flash', {
          env: { GOOGLE_VERTEX_PROJECT: 'p', GOOGLE_VERTEX_LOCATION: location, GOOGLE_VERTEX_ACCESS_TOKEN: 't' },
        }) as unknown as { baseURL: string }
      ).baseURL;
    expect(host('us-central1')).toBe('https://us-central1-aiplatform.googleapis.com/v1beta1/projects/p/locations/us-central1/publishers/google');
    expect(host('global')).toBe('https://aiplatform.googleapis.com/v1beta1/projects/p/locations/global/publishers/google');
  });
  it('without a project, or with a credentials file that does not exist, preflight fails naming the variable', () => {
    const noProject = preflightProblems({ models: [{ ref: 'vertex:gemini-2.5-flash', field: 'judge' }], env: {} });
    expect(noProject).toHaveLength(1);
    expect(noProject[0]?.message).toContain('GOOGLE_VERTEX_PROJECT');
    const badFile = preflightProblems({
      models: [{ ref: 'vertex:gemini-2.5-flash', field: 'judge' }],
      env: { GOOGLE_VERTEX_PROJECT: 'p', GOOGLE_APPLICATION_CREDENTIALS: '/nonexistent/echolens-creds.json' },
    });
    expect(badFile[0]?.message).toContain('GOOGLE_APPLICATION_CREDENTIALS');
  });
});

describe.each([false, true])('bedrock:, stream=%s', (stream) => {
  const MODEL = 'us.anthropic.claude-sonnet-4-5-20250929-v1:0';
  it('posts to /model/<id>/converse with a SigV4 signature and maps the answer', async () => {
    const SECRET = 'aws-test-SECRET-access-key';
    const { response, sent, deltas } = await call(
      bedrock,
      `bedrock:${MODEL}`,
      {
        AWS_REGION: 'us-east-1',
        AWS_ACCESS_KEY_ID: 'AKIDTEST',
        AWS_SECRET_ACCESS_KEY: SECRET,
        AWS_ENDPOINT_URL_BEDROCK_RUNTIME: awsRoot,
      },
      stream,
    );
    expect(response.text).toBe('Hello there, friend.');
    expect(response.usage).toMatchObject({ inputTokens: 21, outputTokens: 5 });
    expect(response.finishReason).toBe('stop');
    expect(decodeURIComponent(sent.path)).toBe(`/model/${MODEL}/${stream ? 'converse-stream' : 'converse'}`);
    if (stream) {
      expect(deltas.join('')).toBe('Hello there, friend.');
      expect(deltas.length).toBeGreaterThan(1);
    }
    expect(sent.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=AKIDTEST\/\d{8}\/us-east-1\/bedrock\/aws4_request/);
    expect(sent.headers.authorization).not.toContain(SECRET);
    const body = sent.body as {
      system: Array<{ text: string }>;
      messages: Array<{ role: string; content: Array<{ text: string }> }>;
      inferenceConfig: { maxTokens: number; temperature: number };
    };
    expect(body.system).toEqual([{ text: 'You are terse.' }]);
    expect(body.messages).toEqual([{ role: 'user', content: [{ text: 'Say hello.' }] }]);
    expect(body.inferenceConfig).toMatchObject({ maxTokens: 64, temperature: 0.2 });
  });
});

describe('bedrock: configuration', () => {
  it('a Bedrock API key is sent as a bearer instead of a signature', async () => {
    const KEY = 'bedrock-test-SECRET-api-key';
    const { sent } = await call(bedrock, `bedrock:amazon.nova-lite-v1:0@${awsRoot}`, { AWS_REGION: 'us-west-2', AWS_BEARER_TOKEN_BEDROCK: KEY }, false);
    expect(sent.headers.authorization).toBe(`Bearer ${KEY}`);
  });
  it('without a region or credentials, preflight lists what is missing', () => {
    const models = [{ ref: 'bedrock:amazon.nova-lite-v1:0', field: 'targets.0' }];
    expect(preflightProblems({ models, env: {} })[0]?.message).toContain('AWS_REGION');
    const noSecret = preflightProblems({ models, env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'AKID' } });
    expect(noSecret[0]?.message).toContain('AWS_SECRET_ACCESS_KEY');
    expect(noSecret[0]?.message).not.toContain('AWS_ACCESS_KEY_ID and');
    expect(preflightProblems({ models, env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'S' } })).toEqual([]);
  });
  it('the default endpoint follows the region', () => {
    const adapter = createAdapter('bedrock:amazon.nova-lite-v1:0', {
      env: { AWS_REGION: 'eu-central-1', AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: 'S' },
    });
    expect((adapter as unknown as { baseURL: string }).baseURL).toBe('https://bedrock-runtime.eu-central-1.amazonaws.com');
  });
  it('a failing call never shows the secret key', async () => {
    const SECRET = 'aws-test-SECRET-never-shown';
    bedrock.pushFaults({ fault: 'status', status: 400, message: `bad request ${SECRET}` });
    const adapter = createAdapter(`bedrock:amazon.nova-lite-v1:0@${awsRoot}`, {
      env: { AWS_REGION: 'us-east-1', AWS_ACCESS_KEY_ID: 'A', AWS_SECRET_ACCESS_KEY: SECRET },
      ...GENEROUS_TIMEOUTS,
    });
    const error = await rejectionOf(adapter.generate(request('bedrock:amazon.nova-lite-v1:0')));
    expect(JSON.stringify({ message: error.message, hint: error.hint })).not.toContain(SECRET);
  });
});
