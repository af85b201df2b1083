/** The commented starter config `echolens init continuation` writes; every key shown is valid as written (src/cli/init.test.ts). */

export const CONTINUATION_STARTER = `# ContextEcho F5 tool-using continuation audit: cut a real session before its recorded tool
# calls and ask each target for the next call under four prefix arms.
#
#   echolens continuation run continuation.yaml --dry-run     # cutpoints, cells, tokens, dollars; calls nothing
#   echolens continuation run continuation.yaml --db runs/continuation.db --max-cost 5
#   echolens continuation report runs/continuation.db
#   echolens gate runs/continuation.db --junit gate.xml        # CI: exit 1 when a target fails
#
# Every key and its default: docs/continuation.md. Keys go in the environment or a .env file.
name: continuation-audit
session: ~/.claude/projects/<project>/<session>.jsonl   # recorded next tool calls are the ground truth (paths relative to this file)
targets:
  - openai:gpt-4.1-mini    # the models audited
cutpoints:
  count: 25                # cutpoints before recorded tool calls (the paper's panel). UNDERPOWERED for |Δ| = 0.15:
                           # MDE ≈ 0.32 under the planning SD 0.55 (about 108 cutpoints reach 80%; the dry run prints it)
  strategy: stratified     # or strided
windowTokens: 3000         # matched prefix length (≈ 4 characters a token)
limits:
  concurrency: 4
  maxCostUsd: 5
gate:                      # thresholds for \`echolens gate\`
  significantActionChange: true   # fail when recent − cross argument fidelity differs significantly
  maxActionChange: 0.2            # fail when that difference is above 0.2 in size
  maxFailedCells: 0.05
`;
