import type { Command } from 'commander';
import { InvalidArgumentError } from '../../core/errors.js';
import { auditConfigJsonSchema } from '../../experiment/config-schema.js';
import { findAudit, listAudits } from '../../experiment/registry.js';
import { emit } from '../options.js';

/** `echolens schema <audit>`: the JSON Schema of an audit's config (from the zod schema the loader uses). */
export function registerSchema(program: Command): void {
  program
    .command('schema')
    .description("print the JSON Schema of an audit's config (for editors: YAML language server, VS Code)")
    .argument(
      '<audit>',
      `a registered audit: ${listAudits()
        .map((a) => a.name)
        .join(', ')}`,
    )
    .option('-o, --out <file>', 'write to a file instead of stdout')
    .action((name: string, options) => {
      const audit = findAudit(name);
      if (!audit)
        throw new InvalidArgumentError(
          '<audit>',
          `must be one of ${listAudits()
            .map((a) => a.name)
            .join(', ')}, got "${name}"`,
        );
      emit(`${JSON.stringify(auditConfigJsonSchema(audit), null, 2)}\n`, options.out);
    });
}
