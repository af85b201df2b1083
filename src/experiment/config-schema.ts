import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { z } from 'zod';
import { packageRoot } from '../core/version.js';
import type { AnyAudit } from './audit.js';

/**
 * The JSON Schema of an audit's config, made from its zod `configSchema` (the one the config
 * loader validates with), for editors: `echolens schema <audit>` prints it and `echolens init`
 * writes it next to the starter config, whose first line points the YAML language server at it.
 */

export function auditConfigJsonSchema(audit: Pick<AnyAudit, 'name' | 'title' | 'configSchema'>): Record<string, unknown> {
  // `input`: what a config file may say (defaults make keys optional); transforms and refinements
  // have no JSON Schema form and are checked by the loader only.
  const schema = z.toJSONSchema(audit.configSchema, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  // Every key's description comes from the key tables of docs/<audit>-config.md and docs/config-common.md,
  // the same tables the documentation shows (src/experiment/config-schema.test.ts: no key without one).
  describeSchema(schema, keyTable(`${audit.name}-config.md`), keyTable('config-common.md'));
  return { ...schema, title: `echolens ${audit.name} config`, description: `${audit.title}: the config of \`echolens ${audit.name} run\`` };
}

/** The key table of a document in docs/ (shipped with the package), empty when there is none. */
export function keyTable(file: string): Map<string, KeyDoc> {
  const path = join(packageRoot(), 'docs', file);
  return existsSync(path) ? parseKeyTable(readFileSync(path, 'utf8')) : new Map();
}

/** The schema file `echolens init` writes next to an audit's starter config. */
export function schemaFileName(audit: Pick<AnyAudit, 'name'>): string {
  return `${audit.name}.schema.json`;
}

/** The first line of a starter config: the YAML language server validates the file against `schemaPath`. */
export function schemaModeline(schemaPath: string): string {
  return `# yaml-language-server: $schema=${schemaPath}\n`;
}

/** One documented config key: its default and meaning, from a docs table (`| \`key\` | default | meaning |`). */
export interface KeyDoc {
  default: string;
  meaning: string;
}

/**
 * The key tables of a config document: rows whose first cell names one or more keys in backticks
 * (`questions.dataset`, `hfConfig`: a key without a dot takes the first key's parent).
 */
export function parseKeyTable(markdown: string): Map<string, KeyDoc> {
  const keys = new Map<string, KeyDoc>();
  for (const line of markdown.split('\n')) {
    const cells = line.startsWith('| `') ? line.split(/(?<!\\)\|/u).slice(1, -1) : [];
    if (cells.length < 3) continue;
    const names = [...(cells[0] as string).matchAll(/`([^`]+)`/gu)].map((m) => m[1] as string);
    const parent = (names[0] ?? '').includes('.') ? (names[0] as string).slice(0, (names[0] as string).lastIndexOf('.') + 1) : '';
    const doc = { default: (cells[1] as string).trim(), meaning: cells.slice(2).join('|').trim() };
    for (const name of names) keys.set(name.includes('.') ? name : `${parent}${name}`, doc);
  }
  return keys;
}

/** Markdown to the plain text editors show as a description: code spans and links unwrapped. */
function plain(markdown: string): string {
  return markdown
    .replace(/\[([^\]]+)\]\([^)]+\)/gu, '$1')
    .replace(/`([^`]*)`/gu, '$1')
    .replace(/\\\|/gu, '|')
    .trim();
}

/**
 * The documentation of a key path: the audit's own table first, then the common one
 * (docs/config-common.md: decoding, limits, gate and analysis keys every audit shares;
 * `judgeDecoding.x` and `labelerDecoding.x` are documented as `decoding.x`).
 */
export function keyDoc(path: string, own: ReadonlyMap<string, KeyDoc>, common: ReadonlyMap<string, KeyDoc>): KeyDoc | undefined {
  const generic = path.replace(/^[a-zA-Z]+Decoding\./u, 'decoding.').replace(/^[a-zA-Z]+Decoding$/u, 'decoding');
  return own.get(path) ?? common.get(path) ?? common.get(generic);
}

/**
 * Adds `description` and `markdownDescription` (and the documented default as an example) to
 * every property of a JSON Schema, from the key tables. Returns the key paths left undocumented.
 */
export function describeSchema(schema: Record<string, unknown>, own: ReadonlyMap<string, KeyDoc>, common: ReadonlyMap<string, KeyDoc>): string[] {
  const missing: string[] = [];
  const walk = (node: Record<string, unknown>, path: string) => {
    const properties = node.properties as Record<string, Record<string, unknown>> | undefined;
    for (const [key, child] of Object.entries(properties ?? {})) {
      const full = path === '' ? key : `${path}.${key}`;
      const doc = keyDoc(full, own, common);
      if (doc === undefined) {
        if (!missing.includes(full)) missing.push(full);
      } else {
        child.description = plain(doc.meaning);
        child.markdownDescription = `${doc.meaning}\n\nDefault: ${doc.default}`;
      }
      const items = (child.items as Record<string, unknown>) ?? {};
      // The object forms of a key: itself, its union members, its array items and their union members (`positions: [{ uniform: 12 }]`).
      for (const candidate of [
        child,
        ...((child.anyOf as Record<string, unknown>[] | undefined) ?? []),
        items,
        ...((items.anyOf as Record<string, unknown>[] | undefined) ?? []),
      ]) {
        if (candidate && typeof candidate === 'object' && candidate.properties) walk(candidate, full);
      }
    }
  };
  walk(schema, '');
  return missing;
}
