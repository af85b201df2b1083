/**
 * Fifteen places for a held-out item in Claude Code and Codex rollout records (corpus 7), more
 * than pii-heldout-corpus.ts's eleven: a Read result whose text is also in `toolUseResult.file`,
 * a Bash result whose text is also in `toolUseResult.stdout`, a heredoc in a Bash command (quotes
 * kept, not stripped), assistant text, Codex `exec_command` arguments and assistant
 * `output_text`. Each record carries the text once per copy the tool itself writes.
 */

const uuid = (n: number) =>
  `9d2f${String(n).padStart(4, '0')}-61ab-4c3e-8f70-${String(n * 104_729)
    .padStart(12, '0')
    .slice(-12)}`;
const at = (n: number) => new Date(Date.UTC(2026, 11, 2, 14, 0, 0) + n * 3_000).toISOString();

export function placeText(text: string, place: number, n: number): { tool: 'claude' | 'codex'; line: string } {
  const envelope = {
    parentUuid: uuid(n - 1),
    isSidechain: false,
    userType: 'external',
    cwd: '/home/dev/billing',
    sessionId: '5b0c2d1e-8f3a-4b6c-9d7e-1a2b3c4d5e6f',
    version: '2.1.160',
    gitBranch: 'main',
    uuid: uuid(n),
    timestamp: at(n),
  };
  const user = (content: unknown, extra: object = {}) => ({ ...envelope, type: 'user', message: { role: 'user', content }, ...extra });
  const assistant = (content: unknown[]) => ({
    ...envelope,
    type: 'assistant',
    requestId: `req_011C${String(n).padStart(6, '0')}`,
    message: {
      id: `msg_01${String(n).padStart(6, '0')}Wq`,
      type: 'message',
      role: 'assistant',
      model: 'claude-opus-4-5',
      content,
      stop_reason: 'tool_use',
      stop_sequence: null,
      usage: { input_tokens: 9, output_tokens: 64, cache_creation_input_tokens: 0, cache_read_input_tokens: 18_000 },
    },
  });
  const toolId = `toolu_01${String(n).padStart(6, '0')}Rk`;
  const callId = `call_${String(n).padStart(6, '0')}Mn`;
  const heredoc = `cat >> notes/contacts.md <<'EOF'\n${text}\nEOF`;
  const codex = (payload: object) => ({ tool: 'codex' as const, line: JSON.stringify({ timestamp: at(n), type: 'response_item', payload }) });
  const claude = (record: object) => ({ tool: 'claude' as const, line: JSON.stringify(record) });
  const numbered = text
    .split('\n')
    .map((l, i) => `${String(i + 1).padStart(6)}\t${l}`)
    .join('\n');
  switch (place % 15) {
    case 0:
      return claude(user(text));
    case 1:
      return claude(user([{ type: 'text', text: `here is what I found:\n${text}` }]));
    case 2:
      return claude(
        user([{ type: 'tool_result', tool_use_id: toolId, content: numbered }], {
          toolUseResult: {
            type: 'text',
            file: { filePath: '/home/dev/billing/data/contacts.txt', content: text, numLines: text.split('\n').length, startLine: 1, totalLines: 40 },
          },
        }),
      );
    case 3:
      return claude(
        user([{ type: 'tool_result', tool_use_id: toolId, content: text, is_error: false }], {
          toolUseResult: { stdout: text, stderr: '', interrupted: false, isImage: false },
        }),
      );
    case 4:
      return claude(assistant([{ type: 'tool_use', id: toolId, name: 'Bash', input: { command: heredoc, description: 'Append to the contacts notes' } }]));
    case 5:
      return claude(
        assistant([{ type: 'tool_use', id: toolId, name: 'Write', input: { file_path: '/home/dev/billing/fixtures/seed.txt', content: `${text}\n` } }]),
      );
    case 6:
      return claude(
        assistant([
          {
            type: 'tool_use',
            id: toolId,
            name: 'Edit',
            input: { file_path: '/home/dev/billing/src/seed.ts', old_string: '// seed', new_string: text, replace_all: false },
          },
        ]),
      );
    case 7:
      return claude(assistant([{ type: 'text', text: `The record in question:\n\n${text}\n\nI will leave it unchanged.` }]));
    case 8:
      return codex({ type: 'message', role: 'user', content: [{ type: 'input_text', text }] });
    case 9:
      return codex({
        type: 'function_call',
        name: 'shell',
        arguments: JSON.stringify({ command: ['bash', '-lc', heredoc], workdir: '/home/dev/billing', timeout_ms: 10_000 }),
        call_id: callId,
      });
    case 10:
      return codex({ type: 'function_call', name: 'exec_command', arguments: JSON.stringify({ cmd: heredoc, yield_time_ms: 1000 }), call_id: callId });
    case 11:
      return codex({
        type: 'function_call_output',
        call_id: callId,
        output:
          n % 2 === 0
            ? JSON.stringify({ output: `${text}\n`, metadata: { exit_code: 0, duration_seconds: 0.2 } })
            : `Chunk ID: 4f1a\nWall time: 0.2 seconds\nProcess exited with code 0\nOutput:\n${text}\n`,
      });
    case 12:
      return codex({
        type: 'custom_tool_call',
        status: 'completed',
        call_id: callId,
        name: 'apply_patch',
        input: `*** Begin Patch\n*** Add File: fixtures/people.txt\n${text
          .split('\n')
          .map((l) => `+${l}`)
          .join('\n')}\n*** End Patch`,
      });
    case 13:
      return { tool: 'codex', line: JSON.stringify({ timestamp: at(n), type: 'event_msg', payload: { type: 'user_message', message: text, images: [] } }) };
    default:
      return codex({ type: 'message', role: 'assistant', content: [{ type: 'output_text', text: `Found this in the export:\n${text}` }] });
  }
}
