// The scale-memory grid, in plain JavaScript: bench/scale-memory.bench.ts plans it from src/
// under tsx, and bench/scale-http.child.mjs from dist/ under plain node (as the CLI runs).

const smoke = process.env.BENCH_SMOKE === '1' || process.env.BENCH_SMOKE === 'true';

export const SIZE = smoke
  ? { targets: 2, positions: 3, categories: ['coding_self'], samples: 1, chars: 20_000, B: 50 }
  : { targets: 12, positions: 12, categories: ['identity', 'experience', 'preference', 'relational', 'coding_self'], samples: 2, chars: 320_000, B: 200 };

const WORDS = [
  'the',
  'tool',
  'call',
  'returned',
  'file',
  'src/index.ts',
  'error',
  'fix',
  'test',
  'passes',
  '"quoted"',
  'json',
  '{',
  '}',
  'user',
  'assistant',
  'npm',
  'run',
  'build',
];

/** Deterministic text that does not compress into a few repeated strings: words from a PRNG. */
export function syntheticText(seed, chars) {
  let a = seed >>> 0;
  const next = () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = Math.imul(a ^ (a >>> 15), a | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
  const parts = [];
  let length = 0;
  while (length < chars) {
    const word = next() < 0.05 ? '\n' : `${WORDS[Math.floor(next() * WORDS.length)]} `;
    parts.push(word);
    length += word.length;
  }
  return parts.join('').slice(0, chars);
}

/**
 * The persona grid through the audit's real planning code (`modules` are the persona config,
 * materials and plan modules, from src/ or dist/): one synthetic session whose every position
 * and arm is a distinct ~80k-token context, built once as sessions-input.ts caches them.
 */
export function planGrid(modules, targets, judge) {
  const config = modules.personaConfigSchema.parse({
    sessions: ['synthetic-session.jsonl'],
    targets,
    judges: [judge],
    positions: [{ uniform: SIZE.positions }],
    probes: { categories: SIZE.categories },
    samples: SIZE.samples,
    analysis: { B: SIZE.B },
  });
  const materials = modules.loadPersonaMaterials(config.materials);
  const contexts = new Map();
  const session = {
    id: 'S1',
    positions: Array.from({ length: SIZE.positions }, (_, i) => ({ label: `U${String(i + 1).padStart(2, '0')}`, value: (i + 1) * 10 })),
    context(position, arm) {
      const id = `${position.label}/${arm}`;
      let messages = contexts.get(id);
      if (!messages) {
        messages = [
          { role: 'user', content: syntheticText(contexts.size + 1, SIZE.chars) },
          { role: 'assistant', content: materials.acknowledgement ?? 'Understood.' },
        ];
        contexts.set(id, messages);
      }
      return messages;
    },
    continuation: () => [],
  };
  const planStart = performance.now();
  const specs = modules.planTargetCells(config, materials.stimuli, [session], { systemPrompts: materials.systemPrompts });
  return { config, specs, planStart, planMs: performance.now() - planStart, uniquePrefixes: contexts.size };
}
