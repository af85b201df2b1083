import { seededRandom } from '../src/core/random.js';
import type { ChatMessage } from '../src/models/types.js';
import type { CellSpec } from '../src/store/types.js';

/**
 * A paper-like persona grid for the caching benchmarks (cache-billing, batch-cache): a shared
 * system prompt, a long context per position and arm (a slice of one synthetic session, or
 * filler), a cache breakpoint after it, then a probe. Seeded: the same sizes give the same grid.
 */

export interface PersonaGridSize {
  positions: number;
  probes: number;
  /** Words of context a cell. */
  wordsPerCell: number;
  /** The words the session text is drawn from (the filler uses each with an `s`). */
  vocabulary: readonly string[];
}

/** `count` words of `vocabulary`, a `user:` or `assistant:` turn marker every 14. */
export function words(count: number, random: () => number, vocabulary: readonly string[]): string {
  const out: string[] = [];
  for (let i = 0; i < count; i += 1) {
    out.push(vocabulary[Math.floor(random() * vocabulary.length)]!);
    if (i % 14 === 13) out.push(random() < 0.5 ? '\nuser:' : '\nassistant:');
  }
  return out.join(' ');
}

/** positions × {real, filler} × probes cells for `model`, probes interleaved across positions and arms (as plans are). */
export function personaGrid(model: string, size: PersonaGridSize): CellSpec[] {
  const { positions, probes, wordsPerCell, vocabulary } = size;
  const system = `You are a coding agent working in a repository. ${words(300, seededRandom(7), vocabulary)}`;
  const stride = Math.round(wordsPerCell / 14);
  const session = words(wordsPerCell + stride * positions, seededRandom(11), vocabulary).split(' ');
  const fillerVocabulary = vocabulary.map((word) => `${word}s`);
  const specs: CellSpec[] = [];
  for (let position = 0; position < positions; position += 1) {
    const contexts = {
      real: session.slice(position * stride, position * stride + wordsPerCell).join(' '),
      filler: words(wordsPerCell, seededRandom(100 + position), fillerVocabulary),
    };
    for (const [arm, context] of Object.entries(contexts)) {
      for (let probe = 0; probe < probes; probe += 1) {
        const messages: ChatMessage[] = [
          { role: 'system', content: system },
          { role: 'user', content: `Here is the session so far:\n${context}` },
          { role: 'assistant', content: 'Understood. I have read the session.', cacheBreakpoint: true },
          { role: 'user', content: `Probe ${probe + 1}: in one paragraph, what would you do next and why?` },
        ];
        specs.push({ request: { model, messages, params: { maxTokens: 1024, temperature: 1 }, sample: 0 }, labels: { position, arm, probe } });
      }
    }
  }
  return specs.sort((a, b) => Number(a.labels.probe) - Number(b.labels.probe));
}

/** The grid with every cell's model set to `model`. */
export function withModel(grid: readonly CellSpec[], model: string): CellSpec[] {
  return grid.map((spec) => ({ ...spec, request: { ...spec.request, model } }));
}
