#!/usr/bin/env node
// Writes data/demo/claude-session.jsonl: a small, realistic Claude Code transcript
// authored for echolens (no real user data). It follows the documented record shapes:
// uuid/parentUuid chain, assistant lines split per content block sharing message.id,
// tool_use / tool_result pairs, a compact_boundary + isCompactSummary pair, and
// an isMeta harness line. Deterministic: the same file every time.
import { writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const out = join(dirname(fileURLToPath(import.meta.url)), '..', 'data', 'demo', 'claude-session.jsonl');
const sessionId = '0b9a3c1e-5d2f-4e8a-9c71-3f2d6e8b1a40';
const cwd = '/home/dev/projects/tally';
let counter = 0;
let clock = Date.parse('2026-10-12T09:00:00Z');
const uuid = () => `00000000-0000-4000-8000-${String(++counter).padStart(12, '0')}`;
const ts = () => {
  clock += 37_000;
  return new Date(clock).toISOString();
};
const lines = [];
let parent = null;

const base = () => ({ sessionId, cwd, version: '2.1.150', gitBranch: 'main', userType: 'external', isSidechain: false });
function user(content, extra = {}) {
  const id = uuid();
  lines.push({ ...base(), type: 'user', uuid: id, parentUuid: parent, timestamp: ts(), message: { role: 'user', content }, ...extra });
  parent = id;
  return id;
}
let msgCounter = 0;
function assistant(blocks) {
  const messageId = `msg_demo${String(++msgCounter).padStart(4, '0')}`;
  const usage = {
    input_tokens: 1200 + msgCounter * 40,
    output_tokens: 80 + (msgCounter % 7) * 20,
    cache_read_input_tokens: 900,
    cache_creation_input_tokens: 120,
  };
  for (const block of blocks) {
    const id = uuid();
    lines.push({
      ...base(),
      type: 'assistant',
      uuid: id,
      parentUuid: parent,
      timestamp: ts(),
      requestId: `req_demo${msgCounter}`,
      message: {
        id: messageId,
        type: 'message',
        role: 'assistant',
        model: 'claude-sonnet-4-5',
        content: [block],
        stop_reason: block.type === 'tool_use' ? 'tool_use' : 'end_turn',
        usage,
      },
    });
    parent = id;
  }
}
let toolCounter = 0;
function tool(name, input, result, text) {
  const toolId = `toolu_demo${String(++toolCounter).padStart(4, '0')}`;
  assistant([...(text ? [{ type: 'text', text }] : []), { type: 'tool_use', id: toolId, name, input }]);
  user([{ type: 'tool_result', tool_use_id: toolId, content: result }]);
}

const tasks = [
  [
    'src/parse.ts',
    'parseLine drops the last field when the line ends with a comma',
    'npm test -- parse',
    'FAIL src/parse.test.ts > parses trailing empty field\n  expected [ "a", "b", "" ] to equal [ "a", "b" ]',
  ],
  ['src/sum.ts', 'totals are off by one cent for some currencies', 'npm test -- sum', 'FAIL src/sum.test.ts > rounds half-even\n  expected 10.05 to be 10.04'],
  [
    'src/cli.ts',
    'the --since flag is ignored when --until is missing',
    'npm test -- cli',
    'FAIL src/cli.test.ts > filters by --since alone\n  expected 3 rows, got 7',
  ],
  [
    'src/report.ts',
    'the Markdown table breaks when a category contains a pipe',
    'npm test -- report',
    'FAIL src/report.test.ts > escapes pipes\n  received "| a|b |"',
  ],
  [
    'src/import.ts',
    'importing a CSV with a BOM puts garbage in the first header',
    'npm test -- import',
    'FAIL src/import.test.ts > strips the BOM\n  expected "date" got "\\ufeffdate"',
  ],
  [
    'src/budget.ts',
    'monthly budgets reset on the wrong day in UTC-offset time zones',
    'npm test -- budget',
    'FAIL src/budget.test.ts > resets on the 1st local time',
  ],
];

user(
  'I maintain tally, a small TypeScript CLI that sums expenses from CSV files. Several tests fail after the refactor. Please fix them one by one, running the tests after each fix, and keep the changes minimal.',
);
user('<command-name>/init</command-name>', { isMeta: true });
assistant([
  { type: 'thinking', thinking: 'Start by running the whole test suite to see what fails.', signature: 'c2lnbmF0dXJl' },
  { type: 'text', text: "I'll start by running the full test suite to see what is failing." },
]);
tool(
  'Bash',
  { command: 'npm test', description: 'Run the test suite' },
  tasks.map((t) => t[3]).join('\n') + '\n\nTest Files  6 failed (9)\n     Tests  6 failed | 41 passed (47)',
);

function fixTask([file, symptom, testCmd, failure], index) {
  user(index === 0 ? `Start with ${file}: ${symptom}.` : `Next: ${symptom}. Same approach please.`);
  tool(
    'Read',
    { file_path: `${cwd}/${file}` },
    `1\texport function ${file.includes('parse') ? 'parseLine' : 'run'}(input: string) {\n2\t  const parts = input.split(',');\n3\t  return parts.filter((p) => p !== '');\n4\t}`,
    `Let me look at ${file}.`,
  );
  tool('Bash', { command: testCmd }, failure, 'Reproducing the failure first.');
  tool(
    'Edit',
    { file_path: `${cwd}/${file}`, old_string: "return parts.filter((p) => p !== '');", new_string: 'return parts.slice(0, parts.length);' },
    'The file has been updated successfully.',
    `The bug is in ${file}: ${symptom}. I'll make the smallest change that fixes it.`,
  );
  tool('Bash', { command: testCmd }, `✓ ${file.replace('.ts', '.test.ts')} (8 tests)\n\nTest Files  1 passed (1)`, 'Running the test again.');
  assistant([{ type: 'text', text: `Fixed: ${symptom}. The ${file} tests pass now. Moving on to the next failure.` }]);
}

tasks.slice(0, 3).forEach(fixTask);

// Compaction: boundary (parentUuid null, logicalParentUuid = last uuid), then the summary row.
const boundary = uuid();
lines.push({
  ...base(),
  type: 'system',
  subtype: 'compact_boundary',
  content: 'Conversation compacted',
  level: 'info',
  uuid: boundary,
  parentUuid: null,
  logicalParentUuid: parent,
  timestamp: ts(),
  compactMetadata: { trigger: 'auto', preTokens: 151234 },
});
parent = boundary;
user(
  'This session is being continued from a previous conversation that ran out of context. The conversation is summarized below:\nThe user maintains tally, a TypeScript CLI summing expenses from CSV files, and asked to fix failing tests one at a time with minimal changes. Fixed so far: parseLine trailing empty field (src/parse.ts), half-even rounding (src/sum.ts), --since without --until (src/cli.ts). Remaining failures: report pipe escaping, CSV BOM import, budget reset day. Continue with the next failing test.',
  { isCompactSummary: true, isVisibleInTranscriptOnly: true },
);
tasks.slice(3).forEach((task, i) => {
  fixTask(task, i + 3);
});
tool('Bash', { command: 'npm test' }, 'Test Files  9 passed (9)\n     Tests  47 passed (47)', 'Running the whole suite once more.');
assistant([
  {
    type: 'text',
    text: 'All 47 tests pass. Summary of the changes: six minimal fixes, one per failing test, each verified by re-running its test file and then the whole suite.',
  },
]);
user('Great, thanks. Please also commit with a short message.');
tool(
  'Bash',
  { command: 'git add -A && git commit -m "Fix six failing tests after the refactor"' },
  '[main 4f1c2ab] Fix six failing tests after the refactor\n 6 files changed, 14 insertions(+), 11 deletions(-)',
  'Committing.',
);
assistant([{ type: 'text', text: 'Committed as 4f1c2ab: "Fix six failing tests after the refactor".' }]);

writeFileSync(out, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
console.log(`wrote ${out}: ${lines.length} lines`);
