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

/** A group of subcommands (`echolens <name> <command>`): the group is made here with its description, each module adds its commands to it. */
function subcommandGroup(name: string, description: string, ...modules: Array<(group: Command) => Promise<void>>): CommandGroup {
  return {
    name,
    async register(program) {
      const group = program.command(name).description(description);
      for (const addCommands of modules) await addCommands(group);
    },
  };
}

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  { name: 'demo', register: async (program) => (await import('./commands/demo.js')).registerDemo(program) },
  subcommandGroup(
    'sessions',
    'read, redact and verify Claude Code / Codex CLI session transcripts',
    async (sessions) => (await import('./commands/sessions.js')).registerSessions(sessions),
    async (sessions) => (await import('./commands/sessions-redact.js')).registerSessionsRedact(sessions),
  ),
  subcommandGroup(
    'persona',
    'persona drift (ContextEcho): snapshot real agentic sessions at positions and probe the assistant register',
    async (persona) => (await import('./commands/persona.js')).registerPersona(persona),
  ),
  subcommandGroup(
    'memory',
    'memory drift (DriftLens): does injected user memory change the reasoning trajectory on persona-independent questions?',
    async (memory) => (await import('./commands/memory.js')).registerMemory(memory),
    async (memory) => (await import('./commands/memory-mitigation.js')).registerMemoryMitigation(memory),
  ),
  { name: 'init', register: async (program) => (await import('./commands/init.js')).registerInit(program) },
  subcommandGroup(
    'continuation',
    'tool-using continuation (ContextEcho F5): does the session prefix change the agent\'s next tool call?',
    async (continuation) => (await import('./commands/continuation.js')).registerContinuation(continuation),
  ),
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
