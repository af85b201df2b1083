import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import * as echolens from './index.js';
import * as metrics from './metrics/index.js';
import * as stats from './stats/index.js';

/**
 * The library API, written out by hand (README "Library API"). Adding or removing a name here is a
 * decision about what users may import; the test fails when src/index.ts and this list disagree.
 * Metrics and statistics are exported whole, so their names come from their own modules.
 */
const CURATED = [
  // errors, version
  'ConfigError',
  'InputError',
  'ModelCallError',
  'packageVersion',
  // persona drift
  'calibratePersona',
  'dryRunPersona',
  'loadPersonaConfig',
  'personaConfigFromFlags',
  'personaReport',
  'preflightPersona',
  'renderPersonaMarkdown',
  'runPersona',
  // memory drift
  'calibrateMemoryDesign',
  'dryRunMemory',
  'loadMemoryConfig',
  'memoryReport',
  'preflightMemory',
  'renderMemoryMarkdown',
  'resolveMemoryStimuli',
  'runMemory',
  // continuation
  'calibrateContinuation',
  'continuationReport',
  'loadContinuationConfig',
  'renderContinuationMarkdown',
  'runContinuation',
  // the Audit protocol
  'getAudit',
  'listAudits',
  'registerAudit',
  'registerBuiltinAudits',
  'registerBuiltinSimProfiles',
  'runAudit',
  // store
  'openStore',
  'PgRunStore',
  'RunStore',
  'SqliteRunStore',
  // models
  'createAdapter',
  'formatModelRef',
  'parseModelRef',
  // sessions
  'discoverSessions',
  'readSession',
  'redactFile',
  'redactText',
  'Redactor',
  'verifyFile',
];

describe('library API', () => {
  it('exports exactly the curated names plus the metrics and statistics modules', () => {
    const expected = [...new Set([...CURATED, ...Object.keys(metrics), ...Object.keys(stats)])].sort();
    expect(Object.keys(echolens).sort()).toEqual(expected);
  });

  it('names in the README table are exported (or are types)', () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Library API'));
    const table = section.slice(0, section.indexOf('```'));
    for (const name of CURATED) expect(table, name).toContain(`\`${name}\``);
  });

  it("the README example's imports exist and are functions", () => {
    const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');
    const section = readme.slice(readme.indexOf('## Library API'));
    const example = /```(?:js|ts)\n([\s\S]*?)```/u.exec(section)?.[1] ?? '';
    const imports = [...example.matchAll(/import\s*\{([^}]*)\}\s*from\s*'echolens'/gu)].flatMap((m) =>
      (m[1] ?? '')
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    );
    expect(imports.length).toBeGreaterThan(3);
    for (const name of imports) expect(typeof (echolens as Record<string, unknown>)[name], name).toBe('function');
  });
});
