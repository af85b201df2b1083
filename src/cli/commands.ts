import type { Command } from 'commander';

/**
 * Every command registers itself here, one line each, so `echolens --help`
 * lists them in this order.
 */
export function registerCommands(_program: Command): void {}
