import { cpSync, existsSync, mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../core/version.js';
import { runCliInProcess } from './testing/run-cli.js';

/**
 * Every `echolens …` command in the README's shell blocks, as a reader would
 * type them: the blocks are replayed in order (each in a fresh folder with the
 * repository's `examples/`, heredoc files written as the block writes them).
 * A command that needs nothing but this package runs in-process and must exit
 * as the README says with some output; every other command must match a rule
 * below saying why it cannot run here (a key, the network, your own files).
 * A new README command that matches no rule fails this test until it is
 * classified.
 */

interface Command {
  block: number;
  /** The command as written, continuation lines joined, comment dropped. */
  text: string;
  args: string[];
}

type Plan =
  | { skip: string }
  | {
      /** Expected exit code (default 0). */
      code?: number;
      /** Arguments actually run when the written ones would take minutes here (the reason says what changed). */
      args?: (args: string[]) => string[];
      cheaper?: string;
      env?: Record<string, string>;
    };

const DUMMY_KEYS = { OPENAI_API_KEY: 'sk-readme-test-dummy', ANTHROPIC_API_KEY: 'sk-ant-readme-test-dummy' };
const calls = 'calls real models (needs a key and the network)';
const yourStore = 'reads the store of a run on real models';

/** First matching rule wins. */
const RULES: Array<[RegExp, Plan]> = [
  [/<[^>]+>/, { skip: 'a placeholder for your own file, session or run id' }],
  [/~\//, { skip: 'reads files in your home folder' }],
  [/postgres(ql)?:\/\//, { skip: 'needs a PostgreSQL server of yours (the team store; tested in src/store/postgres and test/reliability)' }],
  [/^echolens ask /, { skip: calls }],
  [/^echolens view( |$)/, { skip: 'starts a local web server on a store of yours' }],
  [/^echolens demo$/, {}],
  [/^echolens (audits|models)( --json| --prices)?$/, {}],
  [/^echolens init /, {}],
  [/^echolens sessions (list|ingest --all)$/, {}],
  [/^echolens sessions (redact|verify) session/, { skip: 'needs a session transcript of yours' }],
  [/^echolens persona calibrate persona\.yaml$/, { args: (a) => [...a, '--replicates', '50'], cheaper: '50 replicates instead of 400' }],
  [/^echolens persona run persona\.yaml --dry-run$/, { skip: 'the config names your session (a placeholder path)' }],
  [/^echolens memory run examples\/memory-sim\.yaml --db runs\/memory-sim\.db$/, {}],
  [/^echolens memory run memory\.yaml --dry-run$/, { env: DUMMY_KEYS }],
  [
    /^echolens memory calibrate memory\.yaml --replicates 200$/,
    {
      args: (a) => [...a.slice(0, -1), '4', '--bootstrap', '50', '--set', 'questions.limit=6'],
      cheaper: '4 replicates, 50 bootstrap resamples, 6 questions instead of 200 replicates of the full design',
    },
  ],
  [/^echolens continuation calibrate$/, { args: (a) => [...a, '--replicates', '40'], cheaper: '40 replicates instead of 1000' }],
  [/^echolens gate echolens-demo\/demo\.db$/, { code: 1 }],
  [/ --max-cost \d/, { skip: calls }],
  [/ --batch( |$)/, { skip: 'submits to a provider batch API (needs a key and the network)' }],
  [/ --(rater|labeler|labelers|judge) (openai|anthropic):/, { skip: calls }],
  [/^echolens (persona|memory|continuation) report runs\//, { skip: yourStore }],
  [/^echolens (report|gate|runs (list|check|migrate)) runs\//, { skip: yourStore }],
  [/^echolens persona export .*runs\//, { skip: yourStore }],
  [/^echolens persona rejudge runs\//, { skip: yourStore }],
  [/^echolens schema \w+ > /, { skip: 'writes a file into the working folder' }],
  [/^echolens memory curate --import /, { skip: 'needs annotation sheets filled in by your raters' }],
  [/^echolens memory label-sheet export runs\//, { skip: yourStore }],
  [/^echolens memory label-sheet import /, { skip: 'needs a step-label sheet filled in by your reviewer' }],
  [/^echolens memory (dpo-pairs dpo\.yaml|grpo-data memory\.yaml --references)/, { skip: 'needs a DPO config or a references file of yours' }],
  [/^echolens compare last-week\.db this-week\.db$/, { skip: 'compares two stores of yours' }],
  [/^echolens (history|compare) runs\//, { skip: yourStore }],
];

function readmeCommands(): Command[] {
  const readme = readFileSync(join(packageRoot(), 'README.md'), 'utf8');
  const commands: Command[] = [];
  const blocks = [...readme.matchAll(/```bash\n([\s\S]*?)```/g)].map((m) => m[1] ?? '');
  blocks.forEach((body, block) => {
    const lines = body.replace(/\\\n\s*/g, ' ').split('\n');
    for (let i = 0; i < lines.length; i++) {
      const line = lines[i] ?? '';
      if (/^cat > \S+ <<'(\w+)'/.test(line)) {
        const end = /<<'(\w+)'/.exec(line)?.[1];
        while (i < lines.length && lines[i] !== end) i++;
        continue;
      }
      const text = line
        .replace(/^(?:npm ci && )?npm run echolens -- /, 'echolens ')
        .replace(/\s+#\s.*$/, '')
        .trim();
      if (!text.startsWith('echolens ')) continue;
      commands.push({ block, text, args: shellWords(text).slice(1) });
    }
  });
  return commands;
}

/** The files a block writes with `cat > file <<'TAG'` before its commands. */
function heredocs(block: number): Map<string, string> {
  const readme = readFileSync(join(packageRoot(), 'README.md'), 'utf8');
  const body = [...readme.matchAll(/```bash\n([\s\S]*?)```/g)][block]?.[1] ?? '';
  const files = new Map<string, string>();
  for (const m of body.matchAll(/^cat > (\S+) <<'(\w+)'\n([\s\S]*?)^\2$/gm)) files.set(m[1] as string, m[3] as string);
  return files;
}

/** Splits a command line into words (double and single quotes; no expansion). */
function shellWords(text: string): string[] {
  const words: string[] = [];
  for (const m of text.matchAll(/"([^"]*)"|'([^']*)'|(\S+)/g)) words.push(m[1] ?? m[2] ?? m[3] ?? '');
  return words;
}

function planFor(text: string): Plan | undefined {
  return RULES.find(([pattern]) => pattern.test(text))?.[1];
}

const commands = readmeCommands();
const root = mkdtempSync(join(tmpdir(), 'echolens-readme-'));
const startDir = process.cwd();
afterAll(() => process.chdir(startDir));

describe('README commands', () => {
  it('finds the README commands, and every one is either run or skipped for a stated reason', () => {
    expect(commands.length).toBeGreaterThan(30);
    const unclassified = commands.filter((c) => planFor(c.text) === undefined).map((c) => c.text);
    expect(unclassified).toEqual([]);
    const runnable = commands.filter((c) => !('skip' in (planFor(c.text) as Plan)));
    expect(runnable.length).toBeGreaterThanOrEqual(10);
  });

  const runnable = commands.filter((c) => {
    const plan = planFor(c.text);
    return plan !== undefined && !('skip' in plan);
  });
  const prepared = new Set<number>();
  it.each(runnable.map((c) => [c.text, c] as const))('%s', { timeout: 600_000 }, async (_text, command) => {
    const plan = planFor(command.text) as Exclude<Plan, { skip: string }>;
    const dir = join(root, `block-${command.block}`);
    if (!prepared.has(command.block)) {
      prepared.add(command.block);
      mkdirSync(dir, { recursive: true });
      cpSync(join(packageRoot(), 'examples'), join(dir, 'examples'), { recursive: true });
      // The quick start's demo, for blocks that use its store.
      const demo = join(root, 'block-0', 'echolens-demo');
      if (command.block !== 0 && existsSync(demo)) cpSync(demo, join(dir, 'echolens-demo'), { recursive: true });
      for (const [file, content] of heredocs(command.block)) {
        mkdirSync(dirname(join(dir, file)), { recursive: true });
        writeFileSync(join(dir, file), content);
      }
      mkdirSync(join(dir, 'home'), { recursive: true });
    }
    process.chdir(dir);
    const args = plan.args ? plan.args(command.args) : command.args;
    const run = await runCliInProcess(args, { HOME: join(dir, 'home'), ...(plan.env ?? {}) });
    const expected = plan.code ?? 0;
    if (run.code !== expected) {
      throw new Error(`echolens ${args.join(' ')} exited ${run.code}, expected ${expected}\n${run.stderr.slice(-2000)}`);
    }
    expect(`${run.stdout}${run.stderr}`.trim()).not.toBe('');
  });

  it('--help of the CLI and of every command the README uses', { timeout: 120_000 }, async () => {
    process.chdir(root);
    const top = [...new Set(commands.map((c) => c.args[0] as string))];
    for (const name of ['', ...top]) {
      const args = name === '' ? ['--help'] : [name, '--help'];
      const run = await runCliInProcess(args, { HOME: root });
      expect(run.code, `echolens ${args.join(' ')}`).toBe(0);
      expect(run.stdout, `echolens ${args.join(' ')}`).toMatch(/Usage: echolens/);
    }
  });
});
