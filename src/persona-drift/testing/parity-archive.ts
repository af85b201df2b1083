import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * A synthetic archive in the ContextEcho authors' layouts, for the parity test
 * (src/persona-drift/parity.test.ts) and its golden values
 * (src/persona-drift/__fixtures__/golden-parity.json, see tools/golden/PARITY.md for how they were
 * produced). Deterministic: the same files on every call.
 *
 * - per-cell (`results/probes_at_crosscompaction/<target>/<position>/<arm>/<probe>.json`), all 25
 *   probes: `tgt-a` (4 positions, a drifter), `tgt-b` (filler lacks one position: unequal
 *   positions), `tgt-c` (a single position), `tgt-d` (no drift). Along the way: missing files,
 *   `{ probe_id, error }` files, −1 scores and blank responses;
 * - content-position (`docs/OPTION_C_<T>.json`, `full_results`), conditions scratch, recent3K,
 *   recent3K_filler, recent3K_earlier, filler14K: `tgt-a` (also per-cell) and `tgt-e`, with
 *   `{ probe_id, error }` rows and −1 scores.
 */

export const PARITY_PROBES: ReadonlyArray<{ id: string; category: string }> = [
  ...['I01', 'I02', 'I03', 'I04'].map((id) => ({ id, category: 'identity' })),
  ...['O01', 'O02', 'O03', 'O04', 'E01', 'E02', 'E03', 'E04'].map((id) => ({ id, category: 'experience' })),
  ...['P01', 'P02', 'P03', 'P04'].map((id) => ({ id, category: 'preference' })),
  ...['R01', 'R02', 'R03', 'R04'].map((id) => ({ id, category: 'relational' })),
  ...['C01', 'C02', 'C03', 'C04', 'C05'].map((id) => ({ id, category: 'coding_self' })),
];

export const PARITY_PER_CELL: Record<string, { positions: string[]; fillerPositions?: string[]; drift: number }> = {
  'tgt-a': { positions: ['P0_start', 'P1_pre_C1', 'P2_post_C1', 'P5_pre_C6'], drift: 1.2 },
  'tgt-b': { positions: ['P0_start', 'P_pre_C2', 'P3_post_C3', 'P5_pre_C6'], fillerPositions: ['P0_start', 'P_pre_C2', 'P5_pre_C6'], drift: 0.6 },
  'tgt-c': { positions: ['P5_pre_C6'], drift: 0.9 },
  'tgt-d': { positions: ['P0_start', 'P2_post_C1', 'P5_pre_C6'], drift: 0 },
};

export const PARITY_CONTENT_POSITION: Record<string, Record<string, number>> = {
  'tgt-a': { scratch: 0, recent3K: 1.4, recent3K_filler: 0.1, recent3K_earlier: 1.0, filler14K: 0.05 },
  'tgt-e': { scratch: 0, recent3K: 0.7, recent3K_filler: 0.3, recent3K_earlier: 0.2, filler14K: 0 },
};

/** A small deterministic generator (32-bit LCG), so the archive needs no seeded library. */
function lcg(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
    return state / 2 ** 32;
  };
}

/** A score 0–3 around 3 − shift. */
function score(random: () => number, shift: number): number {
  const raw = 3 - shift + (random() - 0.5) * 2.2;
  return Math.max(0, Math.min(3, Math.round(raw)));
}

/** Cross-compaction (S2 stressor) cells: target → positions; real answers are longer and comply less. */
export const PARITY_CROSS_COMPACTION: Record<string, string[]> = {
  'tgt-a': ['P0_start', 'P3_post_C3', 'P5_pre_C6'],
  'tgt-b': ['P0_start', 'P5_pre_C6'],
};

/** Anchor-variant cells: variant → target → positions (P3_post_C3 of tgt-a has 2 cells only: below their minimum of 3). */
export const PARITY_ANCHOR_VARIANTS: Record<string, Record<string, string[]>> = {
  V0_BASELINE: { 'tgt-a': ['P0_start', 'P3_post_C3', 'P5_pre_C6'], 'tgt-b': ['P0_start'] },
  V2_IN_CONTEXT: { 'tgt-a': ['P0_start', 'P5_pre_C6'], 'tgt-b': ['P0_start', 'P5_pre_C6', 'P1_pre_C1'] },
};

function stressorAnswer(random: () => number, verbose: number): string {
  const u = random();
  const command = ['ls -la', 'git status', 'npm test', 'grep -rn TODO src', 'python3 -m pytest -q'][Math.floor(random() * 5)] as string;
  if (u < 0.05) return '';
  if (u < 0.45 - verbose * 0.2) return command;
  if (u < 0.6) return `Let me check that first.\n${command}`;
  if (u < 0.7) return `\`\`\`bash\n${command}\n\`\`\``;
  if (u < 0.8) return `The command is: ${command}`;
  return `${command} ${'&& echo done '.repeat(1 + Math.floor(random() * 8 * (1 + verbose)))}`.trim();
}

function writeStressorCell(path: string, text: string): void {
  mkdirSync(join(path, '..'), { recursive: true });
  writeFileSync(
    path,
    JSON.stringify({ response_text: text, response_len: [...text].length, wall_clock_sec: 1.2, input_tokens: 900, output_tokens: 20 }, null, 2),
  );
}

export function writeParityArchive(root: string): void {
  const random = lcg(20260501);
  for (const [target, positions] of Object.entries(PARITY_CROSS_COMPACTION)) {
    for (const position of positions) {
      for (let v = 0; v < 10; v++) {
        const dir = join(root, 'results', 'cross_compaction', target, position, `v${String(v).padStart(2, '0')}`);
        // A paraphrase with one arm only (their audit needs both files).
        if (!(v === 9 && position === 'P0_start')) writeStressorCell(join(dir, 'claude.json'), stressorAnswer(random, 1));
        writeStressorCell(join(dir, 'filler.json'), stressorAnswer(random, 0));
      }
    }
  }
  for (const [variant, byTarget] of Object.entries(PARITY_ANCHOR_VARIANTS)) {
    for (const [target, positions] of Object.entries(byTarget)) {
      for (const position of positions) {
        const cells = target === 'tgt-a' && position === 'P3_post_C3' && variant === 'V0_BASELINE' ? 2 : 6;
        for (let v = 0; v < cells; v++) {
          const dir = join(root, 'results', 'anchor_variants', variant, target, position, `v${String(v).padStart(2, '0')}`);
          writeStressorCell(join(dir, 'cell.json'), stressorAnswer(random, variant === 'V2_IN_CONTEXT' ? 0.2 : 0.7));
        }
      }
    }
  }
  for (const [target, spec] of Object.entries(PARITY_PER_CELL)) {
    spec.positions.forEach((position) => {
      for (const arm of ['claude_session', 'filler'] as const) {
        if (arm === 'filler' && spec.fillerPositions && !spec.fillerPositions.includes(position)) continue;
        const dir = join(root, 'results', 'probes_at_crosscompaction', target, position, arm);
        mkdirSync(dir, { recursive: true });
        for (const probe of PARITY_PROBES) {
          const u = random();
          const s = score(random, arm === 'claude_session' ? spec.drift * (probe.category === 'coding_self' ? 1 : 0.7) : 0.2);
          if (u < 0.03) continue; // a missing cell
          const file = join(dir, `${probe.id}.json`);
          if (u < 0.06) {
            writeFileSync(file, JSON.stringify({ probe_id: probe.id, error: 'APIStatusError: overloaded' }, null, 2));
            continue;
          }
          writeFileSync(
            file,
            JSON.stringify(
              {
                probe_id: probe.id,
                probe_category: probe.category,
                probe_text: `probe ${probe.id}`,
                arm,
                position,
                target,
                // A blank response (the trajectory figure skips it; the forest keeps its score).
                response_text: u < 0.09 ? '   ' : `answer of ${target} at ${position} (${arm}) to ${probe.id}`,
                input_tokens: 1000,
                output_tokens: 30,
                score: u < 0.13 ? -1 : s,
                label: u < 0.13 ? 'parse_error' : 'synthetic',
                reason: 'synthetic',
              },
              null,
              2,
            ),
          );
        }
      }
    });
  }
  mkdirSync(join(root, 'docs'), { recursive: true });
  for (const [target, conditions] of Object.entries(PARITY_CONTENT_POSITION)) {
    const full: Record<string, { results: unknown[] }> = {};
    for (const [condition, shift] of Object.entries(conditions)) {
      const results: unknown[] = [];
      for (const probe of PARITY_PROBES) {
        const u = random();
        const s = score(random, shift);
        if (u < 0.04) {
          results.push({ probe_id: probe.id, error: 'timeout' });
          continue;
        }
        results.push({
          probe_id: probe.id,
          category: probe.category,
          probe_text: `probe ${probe.id}`,
          response_preview: `answer to ${probe.id} under ${condition}`,
          score: u < 0.08 ? -1 : s,
          label: 'synthetic',
          reason: 'synthetic',
        });
      }
      full[condition] = { results };
    }
    writeFileSync(
      join(root, 'docs', `OPTION_C_${target.toUpperCase().replace(/-/gu, '_')}.json`),
      JSON.stringify({ target_model: target, full_results: full }, null, 2),
    );
  }
}
