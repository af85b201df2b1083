import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseEnv } from 'node:util';

/**
 * Loads `.env` from the working directory (Node's own parser, `util.parseEnv`):
 * API keys and base URLs can live there instead of the shell. A variable
 * already set in the environment wins. Values are never printed or logged;
 * `ECHOLENS_NO_DOTENV=1` turns this off. Returns the names it set.
 */
export function loadDotEnv(env: NodeJS.ProcessEnv = process.env, cwd = process.cwd()): string[] {
  if (env.ECHOLENS_NO_DOTENV === '1') return [];
  const file = resolve(cwd, '.env');
  if (!existsSync(file)) return [];
  let parsed: Record<string, string>;
  try {
    parsed = parseEnv(readFileSync(file, 'utf8')) as Record<string, string>;
  } catch {
    return [];
  }
  const set: string[] = [];
  for (const [name, value] of Object.entries(parsed)) {
    if (env[name] !== undefined) continue;
    env[name] = value;
    set.push(name);
  }
  return set;
}
