import { type Command, Help } from 'commander';
import { listAudits } from '../experiment/registry.js';

/**
 * Every command group, one entry each, in the order `echolens --help` lists
 * them. A group's module is imported only when the command line names it (or
 * when help needs every group), so `echolens --version` and each command load
 * only what they use.
 */
export interface CommandGroup {
  /** The top-level command name. */
  name: string;
  /** How `echolens --help` lists the group (usage term and description), so the overview imports no group module; a test checks both against the loaded group. */
  term: string;
  summary: string;
  register(program: Command): Promise<void>;
}

/** A command (`demo [options]`): its name is the first word of its help term. */
function commandGroup(term: string, summary: string, register: (program: Command) => Promise<void>): CommandGroup {
  return { name: term.split(' ')[0]!, term, summary, register };
}

/** A group of subcommands (`echolens <name> <command>`): the group is made here with its description, each module adds its commands to it. */
function subcommandGroup(name: string, description: string, ...modules: Array<(group: Command) => Promise<void>>): CommandGroup {
  return {
    name,
    term: name,
    summary: description,
    async register(program) {
      const group = program.command(name).description(description);
      for (const addCommands of modules) await addCommands(group);
    },
  };
}

export const COMMAND_GROUPS: readonly CommandGroup[] = [
  commandGroup(
    'demo [options]',
    'run the three audits (persona, memory, continuation) end to end on bundled inputs and write the HTML report (offline: simulated models)',
    async (program) => (await import('./commands/demo.js')).registerDemo(program),
  ),
  subcommandGroup(
    'sessions',
    'read, redact and verify Claude Code / Codex CLI session transcripts',
    async (sessions) => (await import('./commands/sessions.js')).registerSessions(sessions),
    async (sessions) => (await import('./commands/sessions-redact.js')).registerSessionsRedact(sessions),
  ),
  subcommandGroup('persona', 'persona drift (ContextEcho): snapshot real agentic sessions at positions and probe the assistant register', async (persona) =>
    (await import('./commands/persona.js')).registerPersona(persona),
  ),
  subcommandGroup(
    'memory',
    'memory drift (DriftLens): does injected user memory change the reasoning trajectory on persona-independent questions?',
    async (memory) => (await import('./commands/memory.js')).registerMemory(memory),
    async (memory) => (await import('./commands/memory-mitigation.js')).registerMemoryMitigation(memory),
  ),
  commandGroup('init [options] <audit>', 'write a commented starter config for an audit, and its JSON Schema next to it for editors', async (program) =>
    (await import('./commands/init.js')).registerInit(program),
  ),
  commandGroup('schema [options] <audit>', "print the JSON Schema of an audit's config (for editors: YAML language server, VS Code)", async (program) =>
    (await import('./commands/schema.js')).registerSchema(program),
  ),
  subcommandGroup(
    'continuation',
    "tool-using continuation (ContextEcho F5): does the session prefix change the agent's next tool call?",
    async (continuation) => (await import('./commands/continuation.js')).registerContinuation(continuation),
  ),
  commandGroup('audits [options]', 'list the registered audits (experiments a run store can hold, the command that runs each)', async (program) =>
    (await import('./commands/audits.js')).registerAudits(program),
  ),
  commandGroup(
    'report [options] <run.db>',
    'write the report of every run in a store: self-contained HTML with charts, Markdown, JSON or CSV',
    async (program) => (await import('./commands/report.js')).registerReport(program),
  ),
  commandGroup(
    'gate [options] <run.db>',
    'CI gate: check the runs of a store against thresholds; exit 1 when a target fails (JUnit XML, GitHub step summary)',
    async (program) => (await import('./commands/gate.js')).registerGate(program),
  ),
  commandGroup(
    'compare [options] <a.db> [b.db]',
    'two runs of the same audit side by side (B − A with a paired bootstrap CI over shared design units), or with --baseline the latest measurement against a baseline (sign-flip test and interval)',
    async (program) => (await import('./commands/compare.js')).registerCompare(program),
  ),
  commandGroup(
    'history [options] <run.db>',
    'the measurements of each design over time: headline estimates with intervals, tags, and the model versions the providers reported',
    async (program) => (await import('./commands/history.js')).registerHistory(program),
  ),
  commandGroup('runs', 'list, check, migrate, delete, export or import the runs of a run store, or cancel its open batches', async (program) =>
    (await import('./commands/runs.js')).registerRuns(program),
  ),
  commandGroup('worker [options]', 'work the pending cells of a shared PostgreSQL run store (join a run from another machine)', async (program) =>
    (await import('./commands/worker.js')).registerWorker(program),
  ),
  commandGroup(
    'view [options] [run.db...]',
    'local web viewer: browse runs and cells, compare runs, and the live probe (one persona-drift probe, side by side in three contexts)',
    async (program) => (await import('./commands/view.js')).registerView(program),
  ),
  commandGroup(
    'ask [options] <model-ref> <prompt>',
    'send one prompt to a model (same adapters, retries and cost accounting as the experiments)',
    async (program) => (await import('./commands/ask.js')).registerAsk(program),
  ),
  commandGroup('models [options]', 'list model providers (base URLs, key variables), simulated profiles and known prices', async (program) =>
    (await import('./commands/models.js')).registerModels(program),
  ),
];

/**
 * The command groups of the registered audits that have none above (`echolens <audit> run |
 * report | calibrate`, made from the audit's members by audit-commands.ts, as the built-in audits'
 * groups above are, with their hooks), after the built-in groups. The CLI registers the built-in audits before it builds the commands (program.ts).
 */
export function auditCommandGroups(): CommandGroup[] {
  const taken = new Set(COMMAND_GROUPS.map((g) => g.name));
  return listAudits()
    .filter((audit) => !taken.has(audit.command))
    .map((audit) =>
      subcommandGroup(audit.command, `${audit.title}: ${audit.description}`, async (group) =>
        (await import('./commands/audit-commands.js')).registerAuditCommands(group, audit),
      ),
    );
}

/**
 * Registers the groups a command line needs: the one it names (`help <group>` names the one after
 * `help`), or, for the overview (`--help`, no command, an unknown command), every group as a
 * name-and-summary stub so that no group module is imported.
 */
export async function registerCommands(program: Command, args: readonly string[] = [], options: { all?: boolean } = {}): Promise<void> {
  const groups = [...COMMAND_GROUPS, ...auditCommandGroups()];
  if (options.all) {
    for (const group of groups) await group.register(program);
    return;
  }
  const words = args.filter((arg) => !arg.startsWith('-'));
  const wanted = words[0] === 'help' ? words[1] : words[0];
  const named = wanted === undefined ? undefined : groups.find((g) => g.name === wanted);
  if (named) {
    await named.register(program);
    return;
  }
  const terms = new Map(groups.map((g) => [g.name, g.term]));
  for (const group of groups) program.command(group.name).description(group.summary);
  program.configureHelp({
    sortSubcommands: false,
    subcommandTerm(this: Help, command: Command) {
      return terms.get(command.name()) ?? Help.prototype.subcommandTerm.call(this, command);
    },
  });
}
