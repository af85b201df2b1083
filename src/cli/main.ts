#!/usr/bin/env node
import { registerBuiltinSimProfiles } from '../builtin-sims.js';
import { runCli } from './program.js';

registerBuiltinSimProfiles();
const code = await runCli(process.argv);
process.exitCode = code;
