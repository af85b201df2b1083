#!/usr/bin/env node
import { loadDotEnv } from './dotenv.js';
import { exitQuietlyOnBrokenPipe } from './epipe.js';
import { printHelpFromSnapshot } from './help-snapshot.js';

exitQuietlyOnBrokenPipe();
// `<command…> --help` from the build's snapshot of the command tree: no command module is loaded.
if (!printHelpFromSnapshot(process.argv.slice(2))) {
  loadDotEnv();
  const { runCli } = await import('./program.js');
  process.exitCode = await runCli(process.argv);
}
