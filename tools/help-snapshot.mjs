#!/usr/bin/env node
// Part of `npm run build`: writes dist/cli/help-snapshot.json, the command tree `echolens <command…> --help`
// prints its help from without importing the command modules (src/cli/help-snapshot.ts).
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const dist = join(dirname(fileURLToPath(import.meta.url)), '..', 'dist');
const load = (path) => import(pathToFileURL(join(dist, path)).href);
(await load('builtin-sims.js')).registerBuiltinSimProfiles();
(await load('audits.js')).registerBuiltinAudits();
const { buildProgram } = await load('cli/program.js');
const { snapshotOf } = await load('cli/help-snapshot.js');
const snapshot = snapshotOf(await buildProgram());
writeFileSync(join(dist, 'cli', 'help-snapshot.json'), `${JSON.stringify(snapshot)}\n`);
