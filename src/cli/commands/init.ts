import { existsSync } from 'node:fs';
import type { Command } from 'commander';
import { ConfigError, InvalidArgumentError } from '../../core/errors.js';
import { MEMORY_STARTER, PERSONA_STARTER } from '../init-templates.js';
import { emit } from '../options.js';

const STARTERS: Record<string, { text: string; file: string }> = {
  persona: { text: PERSONA_STARTER, file: 'persona.yaml' },
  memory: { text: MEMORY_STARTER, file: 'memory.yaml' },
};

export function registerInit(program: Command): void {
  program
    .command('init')
    .description('write a commented starter config for an audit (persona or memory)')
    .argument('<audit>', 'persona or memory')
    .option('-o, --out <file>', 'where to write it (default persona.yaml / memory.yaml; "-" for stdout)')
    .option('--force', 'overwrite an existing file')
    .action((audit: string, options) => {
      const starter = STARTERS[audit];
      if (!starter) throw new InvalidArgumentError('<audit>', `must be persona or memory, got "${audit}"`);
      const out: string = options.out ?? starter.file;
      if (out === '-') {
        emit(starter.text);
        return;
      }
      if (existsSync(out) && !options.force) {
        throw new ConfigError(`exists; pass --force to overwrite it or -o to write elsewhere`, { file: out });
      }
      emit(starter.text, out);
      process.stderr.write(`next: edit ${out}, then echolens ${audit} run ${out} --dry-run\n`);
    });
}
