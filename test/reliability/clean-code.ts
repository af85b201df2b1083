// The clean code the PII detectors are measured on (issue #40): the held-out test and
// tools/pii-false-positives.ts read the same installed packages the same way.
import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

/** Installed packages' own source (not this repository's, not tests). */
export const CLEAN_PACKAGES = [
  'commander/lib',
  'yaml/dist',
  'zod/v4/classic',
  'zod/v4/core',
  'semver',
  'undici/lib',
  'google-auth-library/build/src',
  'gaxios/build',
  'd3-array/dist',
  'd3-scale/dist',
  'd3-shape/dist',
  'vega-lite/build/src',
];

/** Source files, not tests, type declarations or minified bundles. */
export const isSourceFile = (name: string) => /\.(?:js|mjs|cjs|ts)$/u.test(name) && !/\.(?:test|spec|d)\.[cm]?[jt]s$/u.test(name) && !name.endsWith('.min.js');

/** The files below `dir` (sorted, depth first) that `keep` accepts, skipping folders `skipDir` names; a missing folder is empty. */
export function walkFiles(dir: string, keep: (name: string) => boolean, skipDir = /^(?:test|tests|__tests__|__fixtures__|fixtures|node_modules)$/u): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).sort();
  } catch {
    return [];
  }
  const out: string[] = [];
  for (const name of names) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) {
      if (!skipDir.test(name)) out.push(...walkFiles(path, keep, skipDir));
    } else if (keep(name)) out.push(path);
  }
  return out;
}

/**
 * The span at `start` is a handle in a code annotation's list (`TODO(<handle>)`, `FIXME(@one, @two)`):
 * it names the person who wrote it, personal data found on purpose, counted apart from false positives.
 */
export function inAnnotation(text: string, start: number): boolean {
  return /\b(?:TODO|FIXME|XXX|HACK|NOTE|BUG|REVIEW)\((?:\s*@?[\w.-]+\s*,)*\s*@?$/u.test(text.slice(Math.max(0, start - 80), start));
}
