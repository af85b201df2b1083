import { DEMO_SESSION } from '../../persona-drift/testing/small-config.js';

/** What a test names for `echolens persona run|calibrate`; every list becomes one flag per entry. */
export interface PersonaArgs {
  command?: 'run' | 'calibrate';
  /** Defaults to the demo Claude Code session. */
  sessions?: readonly string[];
  targets?: readonly string[];
  judges?: readonly string[];
  /** `--set` overrides, e.g. `positions=[{uniform: 3}]`. */
  sets?: readonly string[];
  db?: string;
}

const repeated = (flag: string, values: readonly string[] = []) => values.flatMap((v) => [flag, v]);

/** The argv of `echolens persona <command>` for these sessions, models, overrides and store. */
export function personaArgs(o: PersonaArgs): string[] {
  return [
    'persona',
    o.command ?? 'run',
    ...repeated('--session', o.sessions ?? [DEMO_SESSION]),
    ...repeated('--target', o.targets),
    ...repeated('--judge', o.judges),
    ...repeated('--set', o.sets),
    ...(o.db === undefined ? [] : ['--db', o.db]),
  ];
}

/**
 * `echolens persona run` arguments for a small run on the demo session: two uniform positions,
 * `target` judged by sim:judge, into the store `db`; `batch` adds `--batch --poll-interval 0.01`.
 */
export function smallPersonaRunArgs(target: string, db: string, options: { batch?: boolean } = {}): string[] {
  const args = personaArgs({ targets: [target], judges: ['sim:judge'], sets: ['positions=[{uniform: 2}]'], db });
  return options.batch ? [...args, '--batch', '--poll-interval', '0.01'] : args;
}
