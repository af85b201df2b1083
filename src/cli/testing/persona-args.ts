import { DEMO_SESSION } from '../../persona-drift/testing/small-config.js';

/**
 * `echolens persona run` arguments for a small run on the demo session: two uniform positions,
 * `target` judged by sim:judge, into the store `db`; `batch` adds `--batch --poll-interval 0.01`.
 */
export function smallPersonaRunArgs(target: string, db: string, options: { batch?: boolean } = {}): string[] {
  const args = ['persona', 'run', '--session', DEMO_SESSION, '--target', target, '--judge', 'sim:judge', '--set', 'positions=[{uniform: 2}]', '--db', db];
  return options.batch ? [...args, '--batch', '--poll-interval', '0.01'] : args;
}
