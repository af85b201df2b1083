#!/usr/bin/env node
import { loadDotEnv } from './dotenv.js';
import { exitQuietlyOnBrokenPipe } from './epipe.js';
import { runCli } from './program.js';

exitQuietlyOnBrokenPipe();
loadDotEnv();
const code = await runCli(process.argv);
process.exitCode = code;
