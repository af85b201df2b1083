#!/usr/bin/env node
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { loadDotEnv } from './dotenv.js';
import { exitQuietlyOnBrokenPipe } from './epipe.js';
import { runCli } from './program.js';

exitQuietlyOnBrokenPipe();
loadDotEnv();
registerBuiltinSimProfiles();
const code = await runCli(process.argv);
process.exitCode = code;
