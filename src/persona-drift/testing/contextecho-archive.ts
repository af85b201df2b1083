import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

/** The small ContextEcho per-cell archive the CLI tests import: one target, three positions, two arms, five Coding-Self probes. */
export const ARCHIVE_TARGET = 'claude-haiku-4-5';
export const ARCHIVE_POSITIONS = ['P1_pre_C1', 'P3_post_C3', 'P5_pre_C6'] as const;
export const ARCHIVE_PROBES = ['C01', 'C02', 'C03', 'C04', 'C05'] as const;

export type ArchiveArm = 'claude_session' | 'filler';

/**
 * Writes the archive under `root` (results/probes_at_crosscompaction/…). The archived judge's score is
 * 3 on the filler arm and (probe index + position index) mod 4 on the session arm; `response` sets
 * the response text (default `r <probe>`).
 */
export function writeContextEchoArchive(
  root: string,
  response: (arm: ArchiveArm, probe: string, position: number) => string = (_arm, probe) => `r ${probe}`,
): void {
  ARCHIVE_POSITIONS.forEach((position, p) => {
    for (const arm of ['claude_session', 'filler'] as const) {
      const folder = join(root, 'results', 'probes_at_crosscompaction', ARCHIVE_TARGET, position, arm);
      mkdirSync(folder, { recursive: true });
      ARCHIVE_PROBES.forEach((probe, i) => {
        const score = arm === 'filler' ? 3 : (i + p) % 4;
        writeFileSync(
          join(folder, `${probe}.json`),
          JSON.stringify({
            probe_id: probe,
            probe_category: 'coding_self',
            probe_text: `q ${probe}`,
            arm,
            position,
            target: ARCHIVE_TARGET,
            response_text: response(arm, probe, p),
            score,
            label: 'l',
            reason: 'why',
            input_tokens: 10,
            output_tokens: 5,
          }),
        );
      });
    }
  });
}
