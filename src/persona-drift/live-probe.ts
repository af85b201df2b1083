import { basename } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { InvalidArgumentError } from '../core/errors.js';
import { askUntilParsed } from '../experiment/reask.js';
import type { ChatMessage, ModelAdapter } from '../models/types.js';
import { type PersonaConfig, personaConfigSchema, resolveSystemPrompt } from './config.js';
import { assembleProbeMessages, type Intervention } from './interventions.js';
import { buildJudgeMessages, buildJudgeReask, parseJudgeOutput } from './judge.js';
import type { PlannedPosition, SessionPlanInput } from './plan.js';
import { sessionPlanInput } from './sessions-input.js';
import { loadPersonaStimuli, type PersonaStimuli, probeText } from './stimuli.js';
import type { Session } from '../sessions/types.js';

/**
 * The persona audit's live probe (the viewer's page /probe, through the audit's `liveProbe` member): one probe at one position of a session, sent
 * with the real-session context, the matched filler and (optionally) the real
 * context with the A-anchor, streamed as it is generated, then judged.
 * Sessions are read at startup and chosen by index: a request never names a file.
 */

export const PROBE_ARMS = ['real', 'filler', 'anchor'] as const;
export type ProbeArm = (typeof PROBE_ARMS)[number];

export interface ProbeSession {
  index: number;
  id: string;
  name: string;
  total: number;
  positions: readonly PlannedPosition[];
  input: SessionPlanInput;
}

export interface ProbeSetup {
  sessions: ProbeSession[];
  target: string;
  judge: string;
  probes: Array<{ id: string; category: string; text: string }>;
  maxProbeChars: number;
  stimuli: PersonaStimuli;
  config: PersonaConfig;
}

export const MAX_PROBE_CHARS = 4000;

export function createProbeSetup(sessions: readonly Session[], options: { target: string; judge: string; positions?: number }): ProbeSetup {
  const stimuli = loadPersonaStimuli();
  const config = personaConfigSchema.parse({
    sessions: sessions.map((s) => s.file),
    targets: [options.target],
    judges: [options.judge],
    positions: [{ uniform: options.positions ?? 10 }],
  });
  const probeSessions = sessions.map((session, index) => {
    const id = `S${index + 1}`;
    const input = sessionPlanInput(session, config, sessions, id);
    return { index, id, name: basename(session.file), total: session.counters[config.counter], positions: input.positions, input };
  });
  return {
    sessions: probeSessions,
    target: options.target,
    judge: options.judge,
    probes: stimuli.probes.probes.map((p) => ({ id: p.id, category: p.category, text: p.text })),
    maxProbeChars: MAX_PROBE_CHARS,
    stimuli,
    config,
  };
}

export interface ProbeRequest {
  session: number;
  position: number;
  probe: string;
  framed: boolean;
  anchor: boolean;
  sample: number;
}

/** The integer 0..max in `body[field]`, or an InvalidArgumentError naming the field. */
function integerField(body: Record<string, unknown>, field: string, max: number, message: string): number {
  const value = body[field];
  if (typeof value !== 'number' || !Number.isInteger(value) || value < 0 || value > max) throw new InvalidArgumentError(field, message);
  return value;
}

/** Validates a live-probe request body; indexes must name a loaded session and one of its positions. */
export function parseProbeRequest(body: unknown, setup: ProbeSetup): ProbeRequest {
  if (body === null || typeof body !== 'object' || Array.isArray(body)) throw new InvalidArgumentError('body', 'must be a JSON object');
  const b = body as Record<string, unknown>;
  const session = integerField(b, 'session', setup.sessions.length - 1, `must be a session index 0..${setup.sessions.length - 1}`);
  const positions = (setup.sessions[session] as ProbeSession).positions.length;
  const position = integerField(b, 'position', positions - 1, `must be a position index 0..${positions - 1}`);
  const probe = b.probe;
  if (typeof probe !== 'string' || probe.trim() === '' || probe.length > MAX_PROBE_CHARS) {
    throw new InvalidArgumentError('probe', `must be 1–${MAX_PROBE_CHARS} characters of text`);
  }
  const sample = integerField({ sample: b.sample ?? 0 }, 'sample', 1_000_000, 'must be an integer 0..1000000');
  return { session, position, probe: probe.trim(), framed: b.framed !== false, anchor: b.anchor === true, sample };
}

export type ProbeEvent =
  | { event: 'arm'; data: { arm: ProbeArm; messages: number; chars: number; description: string } }
  | { event: 'delta'; data: { arm: ProbeArm; text: string } }
  | { event: 'done'; data: { arm: ProbeArm; text: string; finishReason: string; outputTokens: number; replayedInChunks: boolean } }
  | { event: 'judge'; data: { arm: ProbeArm; score: number | null; label: string | null; reason: string; error: string | null } }
  | { event: 'error'; data: { arm: ProbeArm | null; message: string } }
  | { event: 'end'; data: { simulated: boolean } };

/** The messages each arm sends for a request (also what the page describes). */
export function probeArmMessages(setup: ProbeSetup, request: ProbeRequest): Array<{ arm: ProbeArm; messages: ChatMessage[]; description: string }> {
  const session = setup.sessions[request.session] as ProbeSession;
  const position = session.positions[request.position] as PlannedPosition;
  const system = resolveSystemPrompt(setup.config.systemPrompts[0] ?? 'probe-reference');
  const text = probeText(setup.stimuli.probes.framing, request.probe, request.framed);
  const build = (arm: 'real' | 'filler', mitigation: Intervention) =>
    assembleProbeMessages({
      ...(system ? { system } : {}),
      context: session.input.context(position, arm),
      mitigation,
      texts: setup.stimuli.interventions,
      request: text,
    });
  const where = `${session.id} ${position.label}, step ${position.value} of ${session.total}`;
  const arms: Array<{ arm: ProbeArm; messages: ChatMessage[]; description: string }> = [
    { arm: 'real', messages: build('real', 'none'), description: `real transcript up to ${where}` },
    { arm: 'filler', messages: build('filler', 'none'), description: `length- and structure-matched filler for ${where}` },
  ];
  if (request.anchor) arms.push({ arm: 'anchor', messages: build('real', 'a-anchor'), description: `real transcript up to ${where}, then the A-anchor` });
  return arms;
}

const isSim = (adapter: ModelAdapter) => adapter.provider === 'sim';

/**
 * Runs every arm concurrently, emitting events as text arrives. Adapters that
 * do not stream (sim:) are replayed in small chunks so the page shows the same
 * motion; the `done` event says so.
 */
export async function runLiveProbe(
  setup: ProbeSetup,
  adapters: { target: ModelAdapter; judge: ModelAdapter },
  request: ProbeRequest,
  emit: (event: ProbeEvent) => void,
  signal: AbortSignal,
): Promise<void> {
  const arms = probeArmMessages(setup, request);
  for (const a of arms) {
    emit({
      event: 'arm',
      data: { arm: a.arm, messages: a.messages.length, chars: a.messages.reduce((n, m) => n + m.content.length, 0), description: a.description },
    });
  }
  const params = { ...setup.config.decoding };
  await Promise.all(
    arms.map(async ({ arm, messages }) => {
      let text: string;
      try {
        let streamed = false;
        const response = await adapters.target.generate(
          { model: setup.target, messages, params, sample: request.sample },
          {
            signal,
            onDelta: (delta) => {
              streamed = true;
              emit({ event: 'delta', data: { arm, text: delta } });
            },
          },
        );
        text = response.text;
        if (!streamed) await replayInChunks(text, (piece) => emit({ event: 'delta', data: { arm, text: piece } }), signal);
        emit({
          event: 'done',
          data: { arm, text, finishReason: response.finishReason, outputTokens: response.usage.outputTokens, replayedInChunks: !streamed },
        });
      } catch (error) {
        if (!signal.aborted) emit({ event: 'error', data: { arm, message: `target: ${(error as Error).message}` } });
        return;
      }
      if (signal.aborted) return;
      try {
        emit({ event: 'judge', data: { arm, ...(await judge(setup, adapters.judge, request.probe, text, signal)) } });
      } catch (error) {
        if (!signal.aborted) emit({ event: 'error', data: { arm, message: `judge: ${(error as Error).message}` } });
      }
    }),
  );
  if (!signal.aborted) emit({ event: 'end', data: { simulated: isSim(adapters.target) || isSim(adapters.judge) } });
}

/** Judges the bare probe and the answer; one re-ask after unparseable output (docs/decisions.md#d2). */
async function judge(setup: ProbeSetup, adapter: ModelAdapter, bareProbe: string, response: string, signal: AbortSignal) {
  const verdict = await askUntilParsed(
    async (messages) => (await adapter.generate({ model: setup.judge, messages, params: { ...setup.config.judgeDecoding }, sample: 0 }, { signal })).text,
    buildJudgeMessages(bareProbe, response),
    (text) => {
      const v = parseJudgeOutput(text);
      return v.ok ? { ok: true, value: v } : { ok: false, error: v.error };
    },
    buildJudgeReask,
    1,
  );
  if (verdict.ok) return { score: verdict.value.score, label: verdict.value.label, reason: verdict.value.reason, error: null };
  return { score: null, label: null, reason: '', error: `unparseable verdict: ${verdict.error}` };
}

async function replayInChunks(text: string, emit: (piece: string) => void, signal: AbortSignal): Promise<void> {
  const pieces = text.match(/\S+\s*|\s+/gu) ?? [];
  for (let i = 0; i < pieces.length; i += 2) {
    if (signal.aborted) return;
    emit(pieces.slice(i, i + 2).join(''));
    await sleep(25);
  }
}
