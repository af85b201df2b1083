import { describe, expect, it } from 'vitest';
import { exitCodeOf } from '../cli/exit-codes.js';
import { ModelCallError } from './errors.js';
import { isMissingPackage, loadProviderPackage, OPTIONAL_PROVIDER_PACKAGES } from './optional-packages.js';
import { PROVIDERS } from './providers.js';

describe('optional provider SDKs', () => {
  it('an absent package is a config error (exit 2) naming npm i <package>', () => {
    let caught: unknown;
    try {
      loadProviderPackage('@ai-sdk/not-installed-here', 'groq');
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(ModelCallError);
    expect((caught as ModelCallError).message).toMatch(
      /groq models: the optional package @ai-sdk\/not-installed-here is not installed; install it with: npm i @ai-sdk\/not-installed-here/u,
    );
    expect(exitCodeOf(caught as ModelCallError)).toBe(2);
  });

  it('a present package loads (the dev install has them all)', () => {
    expect(typeof loadProviderPackage<{ createGroq: unknown }>('@ai-sdk/groq', 'groq').createGroq).toBe('function');
  });

  it('tells the package missing from a failure inside it', () => {
    expect(isMissingPackage({ code: 'MODULE_NOT_FOUND', message: "Cannot find module 'pg'" }, 'pg')).toBe(true);
    expect(isMissingPackage({ code: 'MODULE_NOT_FOUND', message: "Cannot find module 'pg-types'" }, 'pg')).toBe(false);
  });

  it('every optional SDK is an optionalDependency of the package, and only those and pg are', async () => {
    const pkg = (await import('../../package.json', { with: { type: 'json' } })).default as {
      optionalDependencies: Record<string, string>;
      dependencies: Record<string, string>;
    };
    const optional = Object.values(OPTIONAL_PROVIDER_PACKAGES);
    expect(Object.keys(pkg.optionalDependencies).sort()).toEqual([...optional, 'pg'].sort());
    for (const name of optional) expect(pkg.dependencies[name]).toBeUndefined();
    // Every provider kind using one is a real provider kind.
    const kinds = new Set(PROVIDERS.map((p) => p.kind));
    for (const kind of Object.keys(OPTIONAL_PROVIDER_PACKAGES)) expect(kinds.has(kind as never)).toBe(true);
  });
});
