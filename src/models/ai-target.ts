import { type CloudProvider, cloudProvider, isCloudKind } from './cloud-providers.js';
import { ModelCallError } from './errors.js';
import { loadProviderPackage, OPTIONAL_PROVIDER_PACKAGES } from './optional-packages.js';
import type { ProviderSpec } from './providers.js';
import type { ModelRef } from './ref.js';

/**
 * Where an AI SDK adapter sends its calls, checked when the adapter is made: the base URL, the
 * API key from the environment, the cloud provider's credentials (Vertex, Bedrock) and the
 * provider's optional SDK package. This module loads no AI SDK, so `createAdapter` can report a
 * missing key or package at once and load the SDK itself on the first call.
 */
export interface AiSdkTarget {
  baseURL: string;
  apiKey: string | undefined;
  /** Vertex and Bedrock: project/region and credentials beyond one key. */
  cloud: CloudProvider | undefined;
  /** The provider's optional SDK package (optional-packages.ts), when it has one. */
  sdk: unknown;
}

/**
 * The target of a parsed reference; ModelCallError('config' | 'auth') when the environment cannot reach it.
 * `trimEnv: false` keeps the spaces around a key or base URL read from the environment (the embeddings path always has).
 */
export function resolveAiSdkTarget(ref: string, parsed: ModelRef, spec: ProviderSpec, env: Record<string, string | undefined>, trimEnv = true): AiSdkTarget {
  const nonEmpty = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : trimEnv ? value.trim() : value);
  const optional = OPTIONAL_PROVIDER_PACKAGES[spec.kind];
  // A missing optional SDK is found here, when the adapter is made: preflight reports it (exit 2, `npm i …`).
  const sdk = optional === undefined || isCloudKind(spec.kind) ? undefined : loadProviderPackage(optional, spec.name);
  if (isCloudKind(spec.kind)) {
    const cloud = cloudProvider(ref, parsed, spec, env);
    return { baseURL: cloud.baseURL, apiKey: undefined, cloud, sdk };
  }
  const envBase = spec.baseURLEnv === undefined ? undefined : nonEmpty(env[spec.baseURLEnv]);
  const baseURL = parsed.baseURL ?? envBase ?? spec.defaultBaseURL;
  if (baseURL === undefined) {
    throw new ModelCallError('config', `${ref}: no base URL; write it as ${spec.example}`, { provider: spec.name });
  }
  const apiKey = spec.keyEnv === undefined ? undefined : nonEmpty(env[spec.keyEnv]);
  if (spec.keyRequired && apiKey === undefined) {
    throw new ModelCallError('auth', `${spec.name}: no API key; set the ${spec.keyEnv} environment variable`, {
      provider: spec.name,
      hint: `export ${spec.keyEnv}=…; keys are read from the environment only and never stored`,
    });
  }
  return { baseURL: baseURL.replace(/\/+$/, ''), apiKey, cloud: undefined, sdk };
}
