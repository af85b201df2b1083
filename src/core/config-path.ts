import { homedir } from 'node:os';
import { isAbsolute, join, resolve } from 'node:path';

/** A path written in a config file: `~/` is the home folder, a relative path is relative to the file's folder (`base`). */
export function configPath(path: string, base: string): string {
  if (path === '~' || path.startsWith('~/')) return join(homedir(), path.slice(1));
  return isAbsolute(path) ? path : resolve(base, path);
}
