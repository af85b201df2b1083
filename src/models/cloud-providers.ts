import type * as BedrockSdk from '@ai-sdk/amazon-bedrock';
import type * as VertexSdk from '@ai-sdk/google-vertex';
import type { LanguageModel } from 'ai';
import { existsSync } from 'node:fs';
import { ModelCallError } from './errors.js';
import type { ProviderSpec } from './providers.js';
import { loadProviderPackage } from './optional-packages.js';
import type { ModelRef } from './ref.js';

/**
 * Google Cloud Vertex AI and Amazon Bedrock: providers whose credentials are
 * more than one API key variable (a project and location, or a region and a
 * key pair). Everything is read from the given environment at adapter
 * creation, so a missing project, region or credential is reported by
 * preflight before any run is recorded.
 */

export interface CloudProvider {
  /** The base URL requests go to (with the Vertex project path). */
  baseURL: string;
  /** Values that must never appear in an error message or the store. */
  secrets: string[];
  languageModel(fetch: typeof globalThis.fetch | undefined): LanguageModel;
}

type Env = Record<string, string | undefined>;

export const DEFAULT_VERTEX_LOCATION = 'us-central1';

export function cloudProvider(ref: string, parsed: ModelRef, spec: ProviderSpec, env: Env): CloudProvider {
  // Optional SDKs (optional-packages.ts): a missing one is a config error naming `npm i …`.
  if (spec.kind === 'vertex') return vertexProvider(ref, parsed, env, loadProviderPackage<typeof VertexSdk>('@ai-sdk/google-vertex', spec.name).createVertex);
  if (spec.kind === 'bedrock')
    return bedrockProvider(ref, parsed, env, loadProviderPackage<typeof BedrockSdk>('@ai-sdk/amazon-bedrock', spec.name).createAmazonBedrock);
  throw new Error(`unreachable: ${spec.name} is not a cloud provider`);
}

export function isCloudKind(kind: ProviderSpec['kind']): boolean {
  return kind === 'vertex' || kind === 'bedrock';
}

/** The Vertex AI host for a location (the same rule the Google Cloud client libraries use). */
export function vertexHost(location: string): string {
  if (location === 'global') return 'https://aiplatform.googleapis.com';
  if (location === 'eu' || location === 'us') return `https://aiplatform.${location}.rep.googleapis.com`;
  return `https://${location}-aiplatform.googleapis.com`;
}

function vertexProvider(ref: string, parsed: ModelRef, env: Env, createVertex: typeof VertexSdk.createVertex): CloudProvider {
  const root = trimSlash(parsed.baseURL ?? nonEmpty(env.GOOGLE_VERTEX_BASE_URL));
  const apiKey = nonEmpty(env.GOOGLE_VERTEX_API_KEY);
  if (apiKey !== undefined) {
    // Express mode: an API key, no project path.
    const baseURL = `${root ?? 'https://aiplatform.googleapis.com'}/v1/publishers/google`;
    return {
      baseURL,
      secrets: [apiKey],
      languageModel: (fetch) => createVertex({ apiKey, baseURL, ...(fetch === undefined ? {} : { fetch }) })(parsed.model),
    };
  }
  const project = nonEmpty(env.GOOGLE_VERTEX_PROJECT);
  if (project === undefined) {
    throw new ModelCallError('config', `${ref}: no Google Cloud project; set the GOOGLE_VERTEX_PROJECT environment variable`, {
      provider: 'vertex',
      hint: 'export GOOGLE_VERTEX_PROJECT=my-project (and GOOGLE_VERTEX_LOCATION, default us-central1), or use an express-mode key GOOGLE_VERTEX_API_KEY',
    });
  }
  const location = nonEmpty(env.GOOGLE_VERTEX_LOCATION) ?? DEFAULT_VERTEX_LOCATION;
  const credentialsFile = nonEmpty(env.GOOGLE_APPLICATION_CREDENTIALS);
  const token = nonEmpty(env.GOOGLE_VERTEX_ACCESS_TOKEN);
  if (token === undefined && credentialsFile !== undefined && !existsSync(credentialsFile)) {
    throw new ModelCallError('auth', `${ref}: GOOGLE_APPLICATION_CREDENTIALS names a file that does not exist: ${credentialsFile}`, {
      provider: 'vertex',
    });
  }
  const baseURL = `${root ?? vertexHost(location)}/v1beta1/projects/${encodeURIComponent(project)}/locations/${encodeURIComponent(location)}/publishers/google`;
  return {
    baseURL,
    secrets: token === undefined ? [] : [token],
    languageModel: (fetch) =>
      createVertex({
        project,
        location,
        baseURL,
        ...(fetch === undefined ? {} : { fetch }),
        // A given access token (e.g. `gcloud auth print-access-token`) is used as is; otherwise
        // google-auth-library finds Application Default Credentials at the first call.
        ...(token === undefined ? {} : { googleAuthOptions: { authClient: staticTokenClient(token) } }),
      })(parsed.model),
  };
}

/** The one method google-auth-library calls on an auth client to sign a request. */
function staticTokenClient(token: string): never {
  return { getAccessToken: async () => ({ token }) } as never;
}

function bedrockProvider(ref: string, parsed: ModelRef, env: Env, createAmazonBedrock: typeof BedrockSdk.createAmazonBedrock): CloudProvider {
  const region = nonEmpty(env.AWS_REGION) ?? nonEmpty(env.AWS_DEFAULT_REGION);
  if (region === undefined) {
    throw new ModelCallError('config', `${ref}: no AWS region; set the AWS_REGION environment variable`, {
      provider: 'bedrock',
      hint: 'export AWS_REGION=us-east-1 (the region where the model is enabled)',
    });
  }
  const baseURL = trimSlash(parsed.baseURL ?? nonEmpty(env.AWS_ENDPOINT_URL_BEDROCK_RUNTIME)) ?? `https://bedrock-runtime.${region}.amazonaws.com`;
  const apiKey = nonEmpty(env.AWS_BEARER_TOKEN_BEDROCK);
  if (apiKey !== undefined) {
    return {
      baseURL,
      secrets: [apiKey],
      languageModel: (fetch) => createAmazonBedrock({ region, baseURL, apiKey, ...(fetch === undefined ? {} : { fetch }) })(parsed.model),
    };
  }
  const accessKeyId = nonEmpty(env.AWS_ACCESS_KEY_ID);
  const secretAccessKey = nonEmpty(env.AWS_SECRET_ACCESS_KEY);
  if (accessKeyId === undefined || secretAccessKey === undefined) {
    const missing = [accessKeyId === undefined ? 'AWS_ACCESS_KEY_ID' : '', secretAccessKey === undefined ? 'AWS_SECRET_ACCESS_KEY' : '']
      .filter((name) => name !== '')
      .join(' and ');
    throw new ModelCallError('auth', `bedrock: no AWS credentials; set ${missing} (or a Bedrock API key in AWS_BEARER_TOKEN_BEDROCK)`, {
      provider: 'bedrock',
      hint: 'with a profile or SSO login: eval "$(aws configure export-credentials --format env)"; keys are read from the environment only and never stored',
    });
  }
  const sessionToken = nonEmpty(env.AWS_SESSION_TOKEN);
  return {
    baseURL,
    secrets: sessionToken === undefined ? [secretAccessKey] : [secretAccessKey, sessionToken],
    languageModel: (fetch) =>
      createAmazonBedrock({
        region,
        baseURL,
        accessKeyId,
        secretAccessKey,
        ...(sessionToken === undefined ? {} : { sessionToken }),
        ...(fetch === undefined ? {} : { fetch }),
      })(parsed.model),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function trimSlash(url: string | undefined): string | undefined {
  return url?.replace(/\/+$/, '');
}
