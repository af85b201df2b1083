import { mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { packageRoot } from '../../core/version.js';
import { runCliInProcess } from '../testing/run-cli.js';
import { type FakeServer, startFakeOpenAI } from '../../models/testing/index.js';

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

/** Runs the CLI in this process (runCli); the fake servers in this process keep answering. */
function cli(args: string[], env: Record<string, string> = {}): Promise<Run> {
  return runCliInProcess(args, env);
}

const dir = mkdtempSync(join(tmpdir(), 'echolens-memory-cli-'));
const example = join(packageRoot(), 'examples', 'memory-sim.yaml');
const small = ['--questions-limit', '3', '--set', 'k=1', '--set', 'conditions=[filler, gender, bereavement]', '--set', 'analysis.B=200'];

// The CLI runs in process; runs still take seconds on a loaded machine: allow for it.
describe('echolens memory', { timeout: 600_000 }, () => {
  it('documents every subcommand in --help', async () => {
    const top = await cli(['memory', '--help']);
    expect(top.code).toBe(0);
    for (const sub of ['run', 'report', 'calibrate', 'curate', 'labeler-check']) expect(top.stdout).toContain(sub);
    const run = await cli(['memory', 'run', '--help']);
    expect(run.stdout).toMatch(/--dry-run/);
    expect(run.stdout).toMatch(/--questions-limit <n>/);
    expect(run.stdout).toMatch(/sim:memory plants drift/);
  });

  it('calibrates a design: false-positive rates, coverage, power and minimum detectable effects', async () => {
    const help = await cli(['memory', 'calibrate', '--help']);
    expect(help.code).toBe(0);
    expect(help.stdout).toMatch(/--replicates <n>/);
    expect(help.stdout).toMatch(/seed-honouring/);
    const out = join(dir, 'calibration.json');
    const args = ['memory', 'calibrate', example, '--replicates', '4', '--bootstrap', '50', '--seed', '3', '--set', 'questions.limit=6'];
    const json = await cli([...args, '--set', 'conditions=[filler, whitespace, gender, bereavement]', '--format', 'json', '-o', out]);
    expect(json.stderr).not.toMatch(/internal error/);
    expect(json.code).toBe(0);
    const calibration = JSON.parse(readFileSync(out, 'utf8'));
    expect(calibration.design).toMatchObject({ questions: 6, conditions: 5, k: 2, sampleSeeds: 'cell', B: 50 });
    expect(calibration.scenarios.map((s: { scenario: { name: string } }) => s.scenario.name)).toEqual(['null', 'planted']);
    const tests = calibration.scenarios[0].tests.map((t: { test: string }) => t.test);
    for (const name of ['dtw/elevation/gender', 'sri/mixedModel/bereavement', 'dtw/dRel/gender', 'dtw/elevation/tier:noise']) expect(tests).toContain(name);
    const md = await cli([...args, '--set', 'conditions=[filler, whitespace, gender]']);
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/# Memory drift: design calibration \(SIMULATED/);
    expect(md.stdout).toMatch(/false-positive rate/);
    expect(md.stdout).toMatch(/Minimum detectable effect at 80 % power/);
    const bad = await cli(['memory', 'calibrate', example, '--replicates', '1']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toMatch(/replicates/);
  });

  it('runs the example on simulated models, reports in Markdown and JSON, and checks the labeler', async () => {
    const db = join(dir, 'run.db');
    const dry = await cli(['memory', 'run', example, '--db', db, '--dry-run', ...small]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toMatch(/3 questions × 4 conditions × 1 target\(s\) → 15 generation cells/);
    expect(dry.stdout).toMatch(/nothing was called/);

    const runReport = join(dir, 'run-report.md');
    const run = await cli(['memory', 'run', example, '--db', db, ...small, '--report', runReport]);
    expect(run.stderr).not.toMatch(/internal error/);
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(/started run memory-[0-9a-f]{12} .*15 generation cells \(0 empty, 0 failed, 0 without steps; steps by tags 15\)/);
    // The headline ends the run, as after `persona run`: elevations with CIs, then where to look next.
    const tail = run.stdout.trim().split('\n').slice(-3);
    // (three questions: too few for the elevation bootstrap, so each tier says n/a)
    const tier = '(n\\/a|not run|[+-]\\d+% \\[[+-]\\d+%, [+-]\\d+%\\])';
    expect(tail[0]).toMatch(
      new RegExp(
        `^memory drift: sim:memory: DTW elevation over the no-memory floor \\(95% CI\\) — noise ${tier}, persona ${tier}, life events ${tier}; validity \\w+$`,
      ),
    );
    expect(tail[1]).toBe('(SIMULATED models: these numbers measure no real model)');
    expect(tail[2]).toMatch(/^report: echolens memory report /);

    const md = await cli(['memory', 'report', db]);
    expect(md.code).toBe(0);
    expect(md.stdout).toMatch(/# Memory drift \(DriftLens\) report/);
    expect(md.stdout).toMatch(/Instrument validity/);
    expect(md.stdout).toMatch(/## Run/);
    // `run --report` writes what `memory report` prints (the verdict block included).
    expect(readFileSync(runReport, 'utf8')).toBe(md.stdout);

    const out = join(dir, 'report.json');
    const json = await cli(['memory', 'report', db, '--format', 'json', '-o', out]);
    expect(json.code).toBe(0);
    const report = JSON.parse(readFileSync(out, 'utf8'));
    expect(report.schema).toBe('echolens.memory-report/1');
    expect(report.runId).toMatch(/^memory-/);
    expect(report.options.B).toBe(200);
    expect(report.counts.scored).toBe(3 * (1 + 3));
    expect(report.run.outcomes.labelled).toBe(15);

    const check = await cli(['memory', 'labeler-check', db, '--labelers', 'sim:labeler', '--repeat', '--alt-ontology', '--format', 'json']);
    expect(check.stderr).not.toMatch(/internal error/);
    expect(check.code).toBe(0);
    const reliability = JSON.parse(check.stdout);
    expect(reliability.passes).toHaveLength(4);
    expect(reliability.withinModel.find((w: { runA: string; runB: string }) => w.runA === 't1-a' && w.runB === 't1-b').exact).toBe(1);
    expect(reliability.wordings[0].exact).toBe(1);
    const checkMd = await cli(['memory', 'labeler-check', db, '--repeat']);
    expect(checkMd.stdout).toMatch(/## Within-model agreement \(Table 10\)/);
  });

  it('names the file, line and key of a config error, without a stack trace', async () => {
    const file = join(dir, 'bad.yaml');
    writeFileSync(file, ['targets: [sim:memory]', 'labeler: sim:labeler', 'injection: sideways'].join('\n'));
    const run = await cli(['memory', 'run', file, '--db', join(dir, 'bad.db')]);
    expect(run.code).toBe(2);
    expect(run.stderr).toContain(`${file}:3: injection:`);
    expect(run.stderr).not.toMatch(/\n\s+at /);
  });

  describe('curate', () => {
    let server: FakeServer;
    beforeAll(async () => {
      server = await startFakeOpenAI({
        respond: (request) => {
          // The first answer is prose: the rater is re-asked (docs/decisions.md#d2).
          if (request.index === 0) return { text: 'All four properties hold, I think.' };
          const prompt = JSON.stringify(request.body?.messages ?? []);
          const standAlone = !prompt.includes('this quote');
          return {
            text: JSON.stringify({ reasoning_invoking: true, unverifiable: true, persona_indifferent: true, stand_alone: standAlone, rationale: 'test rater' }),
          };
        },
      });
    });
    afterAll(() => server.close());

    it('filters by keywords with reasons, rates with an LLM rater as cells, exports and imports annotation sheets', async () => {
      const questions = join(dir, 'candidates.csv');
      writeFileSync(
        questions,
        [
          'id,domain,question',
          'q1,career,Should I take a stable job or a risky startup offer?',
          'q2,career,What is the average salary of a nurse?',
          'q3,family,Lending money to relatives can strain a relationship over the years.',
          'q4,ethics,Is it fair to judge this quote by modern standards?',
        ].join('\n'),
      );
      const out = join(dir, 'curated.jsonl');
      const sheet = join(dir, 'sheet.csv');
      const run = await cli([
        'memory',
        'curate',
        '--questions',
        questions,
        '--rater',
        `openai-compatible:rater@${server.baseURL}`,
        '--db',
        join(dir, 'curate.db'),
        '-o',
        out,
        '--export-sheet',
        sheet,
      ]);
      expect(run.stderr).not.toMatch(/internal error/);
      expect(run.code).toBe(0);
      const rows = readFileSync(out, 'utf8')
        .trim()
        .split('\n')
        .map((line) => JSON.parse(line));
      expect(rows.map((r: { decision: string }) => r.decision)).toEqual(['keep', 'drop', 'keep', 'drop']);
      expect(rows[1].reason).toMatch(/drop-list: .*"what is"/);
      expect(rows[1].rater).toBeUndefined();
      expect(rows[3].reason).toMatch(/rater: not stand_alone/);
      expect(rows[0].rater).toMatchObject({ status: 'rated', attempts: 2 });
      expect(rows[2].rater).toMatchObject({ status: 'rated', attempts: 1 });
      // Three questions were rated (the keyword drop was not) at temperature 0, one of them re-asked.
      expect(server.requests).toHaveLength(4);
      expect(JSON.stringify(server.requests[3]!.body)).toContain('could not be used');
      expect(server.requests[0]!.body).toMatchObject({ temperature: 0 });
      expect(run.stderr).toMatch(/4 questions from .*: 2 keep, 2 drop, 0 review/);

      const header = readFileSync(sheet, 'utf8').split(/\r?\n/)[0];
      expect(header).toBe('item_id,question,label,confidence,comment');
      const filled = (labels: string[]) => ['item_id,question,label,confidence,comment', `q1,x,${labels[0]},0.9,`, `q3,x,${labels[1]},0.8,`].join('\n');
      const sheets = [filled(['yes', 'yes']), filled(['yes', 'no']), filled(['yes', 'no'])].map((text, i) => {
        const file = join(dir, `annotator-${i}.csv`);
        writeFileSync(file, text);
        return file;
      });
      const summary = join(dir, 'annotations.json');
      const imported = await cli(['memory', 'curate', '--import', ...sheets, '-o', summary]);
      expect(imported.code).toBe(0);
      expect(imported.stdout).toMatch(/2 items: 1 unanimous \(3\/3\), 1 two-of-three/);
      expect(JSON.parse(readFileSync(summary, 'utf8')).unanimous).toEqual(['q1']);
    });
  });
});
