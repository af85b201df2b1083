import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { Command } from 'commander';
import { ConfigError, InvalidArgumentError } from '../../core/errors.js';
import type { AnyAudit } from '../../experiment/audit.js';
import { auditConfigJsonSchema, schemaFileName, schemaModeline } from '../../experiment/config-schema.js';
import { listAudits } from '../../experiment/registry.js';
import { emit } from '../options.js';

/** The registered audits that have a starter config. */
const withTemplates = (): AnyAudit[] => listAudits().filter((a) => a.initTemplate !== undefined);

const orList = (names: readonly string[]) => (names.length <= 1 ? (names[0] ?? '') : `${names.slice(0, -1).join(', ')} or ${names.at(-1)}`);

/** `echolens init <audit>`: the audit's starter config, and its JSON Schema next to it for editors. */
export function registerInit(program: Command): void {
  const names = withTemplates().map((a) => a.name);
  program
    .command('init')
    .description('write a commented starter config for an audit, and its JSON Schema next to it for editors')
    .argument('<audit>', orList(names))
    .option(
      '-o, --out <file>',
      `where to write it (default ${withTemplates()
        .map((a) => a.initTemplate?.file)
        .join(' / ')}; "-" for stdout)`,
    )
    .option('--force', 'overwrite an existing file')
    .action((name: string, options) => {
      const audit = withTemplates().find((a) => a.name === name);
      const template = audit?.initTemplate;
      if (!audit || !template) throw new InvalidArgumentError('<audit>', `must be ${orList(names)}, got "${name}"`);
      const out: string = options.out ?? template.file;
      const schemaFile = schemaFileName(audit);
      const text = `${schemaModeline(`./${schemaFile}`)}${template.text}`;
      if (out === '-') {
        emit(text);
        return;
      }
      const schemaPath = join(dirname(out), schemaFile);
      for (const file of [out, schemaPath]) {
        if (existsSync(file) && !options.force) throw new ConfigError(`exists; pass --force to overwrite it or -o to write elsewhere`, { file });
      }
      emit(text, out);
      emit(`${JSON.stringify(auditConfigJsonSchema(audit), null, 2)}\n`, schemaPath);
      process.stderr.write(`next: edit ${out}, then echolens ${audit.command} run ${out} --dry-run\n`);
    });
}
