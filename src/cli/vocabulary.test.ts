import { describe, expect, it } from 'vitest';
import { personaArgs } from './testing/persona-args.js';
import { runCliInProcess } from './testing/run-cli.js';

/** One vocabulary: flags mean the same in run and calibrate, and the spellings of other tools get the echolens one. */
describe('one vocabulary, with did-you-mean', () => {
  const run = [...personaArgs({ judges: ['sim:judge'], db: '/nonexistent/x.db' }), '--dry-run'];

  it('--model (promptfoo, Inspect) names --target', async () => {
    const r = await runCliInProcess([...run, '--model', 'openai:gpt-4.1-mini']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown option '--model'/u);
    expect(r.stderr).toMatch(/hint: echolens names the model under test with --target/u);
  });

  it('a misspelt --set key gets a did-you-mean and the valid keys', async () => {
    const r = await runCliInProcess([...run, '--target', 'sim:persona', '--set', 'postions=[{uniform: 2}]']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/unknown key "postions" \(did you mean "positions"\?\)/u);
    expect(r.stderr).toMatch(/from a --set flag/u);
  });

  it('a model ref spelt provider/model (Inspect, LiteLLM) gets provider:model', async () => {
    const r = await runCliInProcess([...run, '--target', 'openai/gpt-4.1-mini']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/did you mean openai:gpt-4\.1-mini\?/u);
  });

  it('persona calibrate takes --session, --target and --judge as persona run does', async () => {
    const r = await runCliInProcess([...personaArgs({ command: 'calibrate', targets: ['openai:gpt-4.1-mini'] }), '--replicates', '20', '--format', 'json']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    const result = JSON.parse(r.stdout) as { design: { sessions: number; targets: string[]; judges: string[]; positionsPerSession: number } };
    expect(result.design.sessions).toBe(1);
    expect(result.design.targets).toEqual(['openai:gpt-4.1-mini']);
    expect(result.design.judges).toEqual(['sim:judge']);
    expect(result.design.positionsPerSession).toBe(12);
    const none = await runCliInProcess(['persona', 'calibrate']);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/name a config file, or --session/u);
  });
});
