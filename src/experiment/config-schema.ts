import { z } from 'zod';
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
  return { ...schema, title: `echolens ${audit.name} config`, description: `${audit.title}: the config of \`echolens ${audit.name} run\`` };
}

/** The schema file `echolens init` writes next to an audit's starter config. */
export function schemaFileName(audit: Pick<AnyAudit, 'name'>): string {
  return `${audit.name}.schema.json`;
}

/** The first line of a starter config: the YAML language server validates the file against `schemaPath`. */
export function schemaModeline(schemaPath: string): string {
  return `# yaml-language-server: $schema=${schemaPath}\n`;
}
