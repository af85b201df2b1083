import type { Command } from 'commander';

/**
 * Every command group, one entry each, in the order `echolens --help` lists
 * them. A group's module is imported only when the command line names it (or
 * when help needs every group), so `echolens --version` and each command load
 * only what they use.
 */
export interface CommandGroup {
  /** The top-level command name. */
  name: string;
  register(program: Command): Promise<void>;
}

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  { name: 'demo', register: async (program) => (await import('./commands/demo.js')).registerDemo(program) },
  {
    name: 'sessions',
    async register(program) {
      const sessions = program.command('sessions').description('read, redact and verify Claude Code / Codex CLI session transcripts');
      (await import('./commands/sessions.js')).registerSessions(sessions);
      (await import('./commands/sessions-redact.js')).registerSessionsRedact(sessions);
    },
  },
  { name: 'persona', register: async (program) => (await import('./commands/persona.js')).registerPersona(program) },
  {
    name: 'memory',
    async register(program) {
      (await import('./commands/memory.js')).registerMemory(program);
      (await import('./commands/memory-mitigation.js')).registerMemoryMitigation(program.commands.find((c) => c.name() === 'memory')!);
    },
  },
  { name: 'init', register: async (program) => (await import('./commands/init.js')).registerInit(program) },
  { name: 'continuation', register: async (program) => (await import('./commands/continuation.js')).registerContinuation(program) },
  { name: 'audits', register: async (program) => (await import('./commands/audits.js')).registerAudits(program) },
  { name: 'report', register: async (program) => (await import('./commands/report.js')).registerReport(program) },
  { name: 'gate', register: async (program) => (await import('./commands/gate.js')).registerGate(program) },
  { name: 'compare', register: async (program) => (await import('./commands/compare.js')).registerCompare(program) },
  { name: 'runs', register: async (program) => (await import('./commands/runs.js')).registerRuns(program) },
  { name: 'view', register: async (program) => (await import('./commands/view.js')).registerView(program) },
  { name: 'ask', register: async (program) => (await import('./commands/ask.js')).registerAsk(program) },
  { name: 'models', register: async (program) => (await import('./commands/models.js')).registerModels(program) },
];

/** Registers the groups a command line needs: the one it names, or every group (help, unknown or no command). */
export async function registerCommands(program: Command, command?: string): Promise<void> {
  const named = command === undefined ? undefined : COMMAND_GROUPS.find((g) => g.name === command);
  for (const group of named ? [named] : COMMAND_GROUPS) await group.register(program);
}
