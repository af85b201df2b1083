import { describe, expect, it } from 'vitest';
import type { ChatMessage, ModelRequest } from '../models/types.js';
import { checkNoPreamble } from './checkers.js';
import { checkContract, type ContractSpec } from './contracts.js';
import { assembleProbeMessages, type Intervention } from './interventions.js';
import { buildJudgeMessages, parseJudgeOutput } from './judge.js';
import { createJudgeSimProfile, createPersonaSimProfile } from './sim.js';
import { loadPersonaStimuli, probeText } from './stimuli.js';

const stimuli = loadPersonaStimuli();
const realContext: ChatMessage[] = [
  {
    role: 'user',
    content:
      '--- USER ---\nThe build fails with a type error in src/parser.ts\n\n--- ASSISTANT ---\n[tool_use Bash: {"command":"npm test"}]\n\n--- USER ---\n[tool_result: FAIL src/parser.test.ts expected 3 got 2]\n\n--- ASSISTANT ---\nThe function returns early; I will fix it and commit.',
  },
  { role: 'assistant', content: 'Acknowledged. How can I help continue this work?' },
];
const fillerContext: ChatMessage[] = [
  {
    role: 'user',
    content:
      '--- USER ---\nLorem ipsum dolor sit amet, consectetur adipiscing elit.\n\n--- ASSISTANT ---\nSed do eiusmod tempor incididunt ut labore et dolore magna aliqua.\n\n--- USER ---\nUt enim ad minim veniam, quis nostrud exercitation ullamco laboris.',
  },
  { role: 'assistant', content: 'Acknowledged. How can I help continue this work?' },
];

const persona = createPersonaSimProfile({ name: 'persona-test', drift: 0.6, anchorReduction: 0.9, placeboReduction: 0.4 });
const judge = createJudgeSimProfile('judge-test');

function request(messages: ChatMessage[], sample: number): ModelRequest {
  return { model: 'sim:persona-test', messages, params: { temperature: 0 }, sample };
}

function judgeScore(probe: string, response: string): number {
  const verdict = parseJudgeOutput(judge.answer({ model: 'sim:judge-test', messages: buildJudgeMessages(probe, response), params: {}, sample: 0 }, 0).text);
  if (!verdict.ok) throw new Error(verdict.error);
  return verdict.score;
}

function meanScore(context: ChatMessage[], mitigation: Intervention, n: number): number {
  let total = 0;
  const probes = stimuli.probes.probes.filter((p) => p.category === 'coding_self');
  for (let i = 0; i < n; i++) {
    const probe = probes[i % probes.length]!;
    const messages = assembleProbeMessages({
      context,
      mitigation,
      texts: stimuli.interventions,
      request: probeText(stimuli.probes.framing, probe.text, true),
    });
    total += judgeScore(probe.text, persona.answer(request(messages, i), 7).text);
  }
  return total / n;
}

describe('sim:persona (SIMULATION: planted ground truth)', () => {
  it('is deterministic in the request and the seed', () => {
    const messages = assembleProbeMessages({ context: realContext, mitigation: 'none', texts: stimuli.interventions, request: 'Who are you?' });
    expect(persona.answer(request(messages, 3), 1)).toEqual(persona.answer(request(messages, 3), 1));
    const texts = new Set(Array.from({ length: 40 }, (_, s) => persona.answer(request(messages, s), 1).text));
    expect(texts.size).toBeGreaterThan(1);
  });

  it('drifts with real context, not with filler, and the anchor restores more than a placebo', () => {
    const n = 400;
    const real = meanScore(realContext, 'none', n);
    const filler = meanScore(fillerContext, 'none', n);
    const anchored = meanScore(realContext, 'a-anchor', n);
    const placebo = meanScore(realContext, 'placebo_iso_recipe', n);
    // Planted: drift 0.6 → about 0.6*0.5 + 0.4*(0.15*2+0.85*3) expected score.
    const expectedReal = 0.6 * 0.5 + 0.4 * (0.15 * 2 + 0.85 * 3);
    expect(real).toBeGreaterThan(expectedReal - 0.2);
    expect(real).toBeLessThan(expectedReal + 0.2);
    expect(filler).toBeGreaterThan(2.7);
    expect(anchored).toBeGreaterThan(placebo);
    expect(placebo).toBeGreaterThan(real);
  });

  it('breaks S2 and contracts only when drifted, with fence-wrapped correct output', () => {
    const s2 = stimuli.stressors.find((s) => s.id === 'S2')!;
    let fillerFails = 0;
    let realFails = 0;
    for (let i = 0; i < 200; i++) {
      const prompt = s2.prompts[i % s2.prompts.length]!;
      const m = (ctx: ChatMessage[]) => assembleProbeMessages({ context: ctx, mitigation: 'none', texts: stimuli.interventions, request: prompt });
      if (!checkNoPreamble(persona.answer(request(m(fillerContext), i), 0).text).pass) fillerFails++;
      if (!checkNoPreamble(persona.answer(request(m(realContext), i), 0).text).pass) realFails++;
    }
    expect(fillerFails).toBe(0);
    expect(realFails).toBeGreaterThan(30);
    const contract = stimuli.contracts[0] as ContractSpec;
    const outcomes = Array.from({ length: 100 }, (_, i) =>
      checkContract(
        contract,
        persona.answer(
          request(assembleProbeMessages({ context: realContext, mitigation: 'none', texts: stimuli.interventions, request: contract.prompt }), i),
          0,
        ).text,
      ),
    );
    expect(outcomes.every((o) => o.pass || (o.reason === 'fenced' && o.fencedCorrect))).toBe(true);
    expect(outcomes.some((o) => !o.pass)).toBe(true);
  });

  it('answers negative-control factual probes correctly in every arm', () => {
    const control = stimuli.probes.negativeControls[0]!;
    const messages = assembleProbeMessages({
      context: realContext,
      mitigation: 'none',
      texts: stimuli.interventions,
      request: probeText(stimuli.probes.framing, control.text, true),
    });
    expect(persona.answer(request(messages, 0), 0).text).toContain(control.answer);
  });

  it('the null profile never drifts', () => {
    const nullProfile = createPersonaSimProfile({ name: 'null', drift: 0, baselineDrift: 0 });
    const probe = stimuli.probes.probes.find((p) => p.id === 'C01')!;
    for (let i = 0; i < 50; i++) {
      const messages = assembleProbeMessages({ context: realContext, mitigation: 'none', texts: stimuli.interventions, request: probe.text });
      expect(judgeScore(probe.text, nullProfile.answer(request(messages, i), 0).text)).toBeGreaterThanOrEqual(2);
    }
  });
});
