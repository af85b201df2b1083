import type { Command } from 'commander';
import { registerAsk } from './commands/ask.js';
import { registerAudits } from './commands/audits.js';
import { registerContinuation } from './commands/continuation.js';
import { registerDemo } from './commands/demo.js';
import { registerMemory } from './commands/memory.js';
import { registerMemoryMitigation } from './commands/memory-mitigation.js';
import { registerModels } from './commands/models.js';
import { registerPersona } from './commands/persona.js';
import { registerReport } from './commands/report.js';
import { registerSessions } from './commands/sessions.js';
import { registerSessionsRedact } from './commands/sessions-redact.js';
import { registerView } from './commands/view.js';

/**
 * Every command registers itself here, one line each, so `echolens --help`
 * lists them in this order.
 */
export function registerCommands(program: Command): void {
  registerDemo(program);
  const sessions = program.command('sessions').description('read, redact and verify Claude Code / Codex CLI session transcripts');
  registerSessions(sessions);
  registerSessionsRedact(sessions);
  registerPersona(program);
  registerMemory(program);
  registerMemoryMitigation(program.commands.find((c) => c.name() === 'memory')!);
  registerContinuation(program);
  registerAudits(program);
  registerReport(program);
  registerView(program);
  registerAsk(program);
  registerModels(program);
}
