import { createRequire } from 'node:module';
import { ModelCallError } from './errors.js';
import type { ProviderSpec } from './providers.js';

/**
 * Provider SDKs installed only by those who use them (package.json `optionalDependencies`):
 * OpenAI, Anthropic and OpenAI-compatible servers are always there; these are loaded on first
 * use of a model ref of their provider, and a missing one is a config error (exit 2 at preflight)
 * naming the `npm i` that installs it.
 */
export const OPTIONAL_PROVIDER_PACKAGES: Partial<Record<ProviderSpec['kind'], string>> = {
  azure: '@ai-sdk/azure',
  mistral: '@ai-sdk/mistral',
  groq: '@ai-sdk/groq',
  deepseek: '@ai-sdk/deepseek',
  google: '@ai-sdk/google',
  vertex: '@ai-sdk/google-vertex',
  bedrock: '@ai-sdk/amazon-bedrock',
};

const require = createRequire(import.meta.url);

/** Whether a load failure is the package itself being absent (not one of its own imports failing). */
export function isMissingPackage(error: unknown, name: string): boolean {
  const e = error as NodeJS.ErrnoException;
  return (e?.code === 'MODULE_NOT_FOUND' || e?.code === 'ERR_MODULE_NOT_FOUND') && String(e.message).includes(`'${name}'`);
}

/** The message naming the package to install. */
export function missingPackageMessage(name: string, what: string): string {
  return `${what}: the optional package ${name} is not installed; install it with: npm i ${name}`;
}

/** Loads an optional provider SDK (synchronously, once; Node caches it), or throws a config error naming `npm i <package>`. */
export function loadProviderPackage<T>(name: string, provider: string): T {
  try {
    return require(name) as T;
  } catch (error) {
    if (isMissingPackage(error, name)) {
      throw new ModelCallError('config', missingPackageMessage(name, `${provider} models`), { provider });
    }
    throw error;
  }
}
