import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ClaudeParser, type ClaudeParseResult } from './claude.js';
import { SKIPPED, skimClaudeLine } from './claude-skim.js';
import { CLAUDE_INJECTED_PREFIXES, CLAUDE_SUMMARY_OPENING, CODEX_INJECTED_PREFIXES } from './classify.js';
import { CLAUDE_HOME, FIXTURES } from './testing/fixtures.js';

function claudeFixtures(): string[] {
  const out: string[] = [join(FIXTURES, 'claude-linear.jsonl')];
  const walk = (dir: string): void => {
    for (const name of readdirSync(dir).sort()) {
      const path = join(dir, name);
      if (statSync(path).isDirectory()) walk(path);
      else if (name.endsWith('.jsonl')) out.push(path);
    }
  };
  walk(CLAUDE_HOME);
  walk(join(FIXTURES, 'claude-continuation'));
  return out;
}

function view(result: ClaudeParseResult): unknown {
  const b = result.builder;
  return {
    messages: b.messages,
    events: b.events,
    compactions: b.compactions,
    counters: b.counters,
    usage: b.usage,
    models: [...b.models].sort(),
    toolsUsed: b.toolsUsed,
    firstTimestamp: b.firstTimestamp,
    lastTimestamp: b.lastTimestamp,
    replayedMessages: b.replayedMessages,
    offChainRecords: result.offChainRecords,
    inlineSubagents: result.inlineSubagents,
    warnings: result.warnings,
    sessionId: result.sessionId,
    forkedFrom: result.forkedFrom,
    continuesFrom: result.continuesFrom,
    leafUuid: result.leafUuid,
    cwd: result.cwd,
    version: result.version,
  };
}

/** Counting-mode parse of `lines` through the byte fast path and through JSON.parse of each whole line. */
function bothWays(lines: string[], asSubagent = false): { fast: unknown; parsed: unknown } {
  const fast = new ClaudeParser('t.jsonl', { keepContent: false, asSubagent });
  const parsed = new ClaudeParser('t.jsonl', { keepContent: false, asSubagent, skimFields: false });
  lines.forEach((text, index) => {
    if (text === '') return;
    fast.lineBytes(index + 1, Buffer.from(text, 'utf8'));
    parsed.line(index + 1, text);
  });
  return { fast: view(fast.finish()), parsed: view(parsed.finish()) };
}

describe('claude-skim: the byte fast path gives the same Session data as JSON.parse', () => {
  it('on every Claude Code fixture (main and subagent reading)', () => {
    const files = claudeFixtures();
    expect(files.length).toBeGreaterThanOrEqual(5);
    for (const file of files) {
      const lines = readFileSync(file, 'utf8').split('\n');
      // The fast path reads every line JSON.parse accepts (the fallback is not what is tested here).
      for (const line of lines) {
        if (line === '') continue;
        let valid = true;
        try {
          JSON.parse(line);
        } catch {
          valid = false;
        }
        expect(skimClaudeLine(Buffer.from(line)) !== undefined, line.slice(0, 80)).toBe(valid);
      }
      for (const asSubagent of [false, true]) {
        const { fast, parsed } = bothWays(lines, asSubagent);
        expect(fast, file).toEqual(parsed);
      }
    }
  });

  it('on 300 fuzzed transcripts (damaged values, truncations, control bytes, escapes, duplicate keys, long texts)', () => {
    const sources = claudeFixtures().map((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l !== ''));
    let state = 99173;
    const random = (): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const blank = ' \n\t\u00a0\u2028\ufeff';
    const longText = (): string => {
      const head = Array.from({ length: 2000 + Math.floor(random() * 3000) }, () => pick([...blank])).join('');
      return head + pick(['', 'x', '\u00e9t\u00e9', '\ud83d\ude00', '<command-name>', '\\"q']);
    };
    const junk: unknown[] = [null, 0, -0, 1e308, 1.5e-7, -12, '', 'x', [], {}, true, false, [{}], { type: 'text' }, '<synthetic>', 'compact_boundary', 'tool_result', '\u0000'];
    const mutateValue = (value: unknown, depth: number): unknown => {
      if (depth > 4 || random() < 0.12) return random() < 0.2 ? longText() : pick(junk);
      if (Array.isArray(value)) return value.map((v) => (random() < 0.3 ? mutateValue(v, depth + 1) : v));
      if (value !== null && typeof value === 'object') {
        const out: Record<string, unknown> = {};
        for (const [k, v] of Object.entries(value)) {
          if (random() < 0.08) continue;
          out[k] = random() < 0.3 ? mutateValue(v, depth + 1) : v;
        }
        return out;
      }
      if (typeof value === 'string' && random() < 0.3) return random() < 0.5 ? longText() : `${value}\u00e9\\\u2028`;
      return random() < 0.5 ? pick(junk) : value;
    };
    const mutateLine = (text: string): string => {
      const r = random();
      if (r < 0.1) return text.slice(0, Math.floor(random() * text.length));
      if (r < 0.15) return `${text.slice(0, 12)}\t${text.slice(12)}`;
      if (r < 0.2) return `  ${text} \r`;
      if (r < 0.25) return `${text}x`;
      // A needed key twice (JSON.parse keeps the last) or spelled with an escape.
      if (r < 0.3) return text.replace('{"', '{"type":"system","');
      if (r < 0.35) return text.replace('"type"', '"typ\\u0065"');
      if (r < 0.4) return text.replace(/"parentUuid":"/, '"parentUuid":"\\u00e9');
      try {
        return JSON.stringify(mutateValue(JSON.parse(text), 0));
      } catch {
        return text;
      }
    };
    let fallbacks = 0;
    let fastLines = 0;
    for (let iteration = 0; iteration < 300; iteration += 1) {
      // Mutations stack: a line may be damaged twice.
      const lines = pick(sources).map((l) => (random() < 0.35 ? mutateLine(random() < 0.2 ? mutateLine(l) : l) : l));
      for (const line of lines) {
        if (line.trim() === '') continue;
        if (skimClaudeLine(Buffer.from(line)) === undefined) fallbacks += 1;
        else fastLines += 1;
      }
      const { fast, parsed } = bothWays(lines, random() < 0.2);
      expect(fast, `iteration ${iteration}`).toEqual(parsed);
    }
    // Both paths were exercised.
    expect(fallbacks).toBeGreaterThan(100);
    expect(fastLines).toBeGreaterThan(1000);
  });
});

describe('linking records in the wasm reader (uuids, parents, message ids, timestamps)', () => {
  it('gives what JSON.parse gives on 400 generated transcripts: replays, forward and missing parents, shared message ids, odd timestamps, every block kind, usage values, header fields', () => {
    let state = 4242;
    const random = (): number => {
      state = (Math.imul(state, 1664525) + 1013904223) >>> 0;
      return state / 4294967296;
    };
    const pick = <T>(items: readonly T[]): T => items[Math.floor(random() * items.length)]!;
    const hex = (n: number): string => Array.from({ length: n }, () => '0123456789abcdef'[Math.floor(random() * 16)]).join('');
    const uuid = (): string => `${hex(8)}-${hex(4)}-4${hex(3)}-8${hex(3)}-${hex(12)}`;
    // Ids as JSON text: canonical uuids, lookalikes, other ids, escaped spellings of canonical ones.
    const idText = (id: string): string => {
      const r = random();
      if (r < 0.08) return JSON.stringify(id).replace(/[a-f]/, (c) => `\\u00${c.charCodeAt(0).toString(16)}`);
      return JSON.stringify(id);
    };
    const freshId = (): string => {
      const r = random();
      if (r < 0.75) return uuid();
      if (r < 0.85) return uuid().toUpperCase();
      if (r < 0.92) return `${uuid().slice(0, 35)}g`;
      return `id-${hex(1 + Math.floor(random() * 20))}\u00e9`;
    };
    const timestamp = (): string | undefined => {
      const r = random();
      const base = `2026-${String(1 + Math.floor(random() * 12)).padStart(2, '0')}-${String(1 + Math.floor(random() * 28)).padStart(2, '0')}T${hex(2)}:00:00.000Z`;
      if (r < 0.7) return JSON.stringify(base);
      if (r < 0.75) return JSON.stringify(`${base}\u00e9`);
      if (r < 0.8) return JSON.stringify(`${base}${'9'.repeat(80)}`);
      if (r < 0.85) return JSON.stringify(base).replace('T', '\\u0054');
      if (r < 0.9) return JSON.stringify(`\ud83d\ude00${base}`);
      if (r < 0.95) return '12';
      return undefined;
    };
    for (let graph = 0; graph < 400; graph += 1) {
      const ids: string[] = [];
      const messageIds: string[] = [];
      const lines: string[] = [];
      const count = 5 + Math.floor(random() * 60);
      for (let i = 0; i < count; i += 1) {
        const type = pick(['user', 'assistant', 'assistant', 'system', 'attachment', 'progress', 'summary']);
        // Replays reuse an id; some records have none.
        const r = random();
        const id = r < 0.12 && ids.length > 0 ? pick(ids) : freshId();
        if (!ids.includes(id)) ids.push(id);
        const fields: string[] = [`"type":"${type}"`];
        if (random() > 0.05) fields.push(`"uuid":${idText(id)}`);
        const p = random();
        if (p < 0.75 && ids.length > 1) fields.push(`"parentUuid":${idText(ids[ids.length - 2]!)}`);
        else if (p < 0.82 && ids.length > 0) fields.push(`"parentUuid":${idText(pick(ids))}`);
        else if (p < 0.88) fields.push(`"parentUuid":${idText(freshId())}`);
        else if (p < 0.94) fields.push('"parentUuid":null');
        const t = timestamp();
        if (t !== undefined) fields.push(`"timestamp":${t}`);
        // Header and flag fields, sometimes late, changed, escaped or of another kind.
        if (random() < 0.3) fields.push(`"version":${pick(['"2.1.0"', '"2.1.1"', '"2.\\u0031.2"', '7', `"${'9'.repeat(70)}"`])}`);
        if (random() < 0.15) fields.push(`"sessionId":${pick(['"s-1"', '"s-2"', '"s\\u002d3"', 'null'])}`);
        if (random() < 0.15) fields.push(`"cwd":${pick(['"/w"', '"/v"', '3'])}`);
        if (random() < 0.05) fields.push('"forkedFrom":{"sessionId":"s-0","messageUuid":"m-0"}');
        if (random() < 0.08) fields.push(`"agentId":${pick(['"a1"', '"a2"', 'null'])}`);
        if (random() < 0.1) fields.push(`"isSidechain":${pick(['true', 'false', '1'])}`);
        if (random() < 0.1) fields.push(`"isMeta":${pick(['true', 'false'])}`);
        if (random() < 0.05) fields.push(`"isCompactSummary":${pick(['true', 'false'])}`);
        if (random() < 0.1) fields.push(`"isApiErrorMessage":${pick(['true', 'false'])}`);
        // User texts: blank ones, harness prefixes after white space of every kind (JSON escapes, no-break and line
        // separators, long runs that push the prefix past the first 200 characters), escaped prefix characters.
        const spaces = (): string => pick(['', ' ', '\\n', '\\t\\r\\f', '\\u000b', '\u00a0', '\u2028\u3000', '\ufeff', '\\u2029', ' '.repeat(150 + Math.floor(random() * 100)), '\\b']);
        const prefix = (): string => pick([...CLAUDE_INJECTED_PREFIXES, ...CODEX_INJECTED_PREFIXES, CLAUDE_SUMMARY_OPENING, '<command-nam', '\\u003ccommand-name>', 'plain words', '\\u00e9t\\u00e9', '\ud83d\ude00']);
        const userText = (): string => JSON.stringify(`${spaces()}${prefix()}${pick(['', ' rest', '\\n more'])}`).replace(/\\\\/g, '\\');
        const block = (): string =>
          pick([
            `{"type":"text","text":${userText()}}`,
            `{"type":"text","text":${userText()}}`,
            `{"type":"text","text":"${pick([' ', '\\n', '\\u00a0', ''])}"}`,
            '{"type":"text","text":"t"}',
            '{"type":"text","text":"  "}',
            '{"type":"text","text":"<command-name>x"}',
            '{"type":"text","text":"This session is being continued from a previous conversation"}',
            '{"type":"tool_use","id":"tu","name":"Bash","input":{}}',
            '{"type":"tool_use","id":"tu","name":"Read","input":{}}',
            '{"type":"tool_use","id":"tu","input":{}}',
            '{"type":"tool_use","id":"tu","name":"B\\u0061sh","input":{}}',
            '{"type":"server_tool_use","id":"st","name":"web_search","input":{}}',
            '{"type":"tool_result","tool_use_id":"tu","content":"ok"}',
            '{"type":"image","source":{}}',
            '{"type":"document","source":{}}',
            '{"type":"thinking","thinking":"hm"}',
            '{"type":"t\\u0065xt","text":"esc"}',
            '{"type":7}',
            '"loose"',
          ]);
        const content = (): string => {
          const r2 = random();
          if (r2 < 0.15) return random() < 0.5 ? `"prompt ${i}"` : userText();
          if (r2 < 0.2) return pick(['null', '3', '{}', '"  "']);
          return `[${Array.from({ length: Math.floor(random() * 4) }, block).join(',')}]`;
        };
        if (type === 'assistant') {
          const m = random() < 0.5 && messageIds.length > 0 ? messageIds[messageIds.length - 1]! : random() < 0.1 && messageIds.length > 0 ? pick(messageIds) : `msg_${hex(10)}`;
          messageIds.push(m);
          const idField = random() < 0.1 ? `"id":${JSON.stringify(m).replace('m', '\\u006d')}` : `"id":${JSON.stringify(m)}`;
          const model = pick(['"model":"claude-x",', '"model":"claude-y",', '"model":"<synthetic>",', '"model":"cl\\u0061ude-x",', '"model":5,', '']);
          const tokens = (): string => pick(['12', '0', '1.5', '-3', '1e3', '"7"', 'null', '12345678901', `${Math.floor(random() * 1000)}`]);
          const usage = random() < 0.8 ? `,"usage":{"input_tokens":${tokens()},"output_tokens":${tokens()},"cache_read_input_tokens":${tokens()}${random() < 0.5 ? `,"cache_creation_input_tokens":${tokens()}` : ''}}` : random() < 0.5 ? ',"usage":7' : '';
          fields.push(random() < 0.05 ? '"message":"x"' : `"message":{"role":"assistant",${model}${idField},"content":${content()}${usage}}`);
        } else if (type === 'user') fields.push(random() < 0.05 ? '"message":null' : `"message":{"role":"user","content":${content()}}`);
        else if (type === 'system' && random() < 0.3) fields.push(`"subtype":"compact_boundary","logicalParentUuid":${idText(pick(ids))}`);
        lines.push(`{${fields.join(',')}}`);
      }
      const { fast, parsed } = bothWays(lines, random() < 0.15);
      expect(fast, `graph ${graph}: ${lines.join('\n')}`).toEqual(parsed);
    }
  });
});

describe('the wasm reader tells harness text as classify.ts does', () => {
  it('gives the kind JSON.parse gives for texts at the edges: white space runs around 200 characters, openings after white space, escapes', () => {
    const texts: string[] = [];
    for (const prefix of ['<command-name>x', 'Caveat: The messages below were generated by the user while running local commands', CLAUDE_SUMMARY_OPENING]) {
      for (const n of [0, 1, 100, 115, 116, 117, 185, 186, 187, 199, 200, 201, 260]) {
        texts.push(JSON.stringify(`${' '.repeat(n)}${prefix}`));
        texts.push(JSON.stringify(`${'\n'.repeat(n)}${prefix}`));
      }
    }
    texts.push('"\\u003ccommand-name>x"', '"\\u0054his session is being continued from a previous conversation"', '"\\u00a0<bash-input>ls"', '"\u2028\\u2029\\u000b<bash-input>ls"', '"\\b<bash-input>ls"', '" \\t "', '""');
    for (const text of texts) {
      for (const content of [text, `[{"type":"text","text":"  "},{"type":"text","text":${text}},{"type":"text","text":"<command-name>late"}]`]) {
        const lines = [
          '{"type":"user","uuid":"u1","parentUuid":null,"sessionId":"s","cwd":"/w","message":{"role":"user","content":"start"}}',
          `{"type":"user","uuid":"u2","parentUuid":"u1","message":{"role":"user","content":${content}}}`,
        ];
        const { fast, parsed } = bothWays(lines);
        expect(fast, content.slice(0, 120)).toEqual(parsed);
      }
    }
  });

  it('keeps the same prefix lists and summary opening as classify.ts', () => {
    const source = readFileSync(join(FIXTURES, '../../../wasm/claude-fields.ts'), 'utf8');
    const list = /const INJECTED_PREFIXES: string\[\] = \[([^\]]*)\];/.exec(source)?.[1];
    expect(list).toBeDefined();
    const prefixes = [...list!.matchAll(/'([^']*)'/g)].map((m) => m[1]);
    expect(prefixes).toEqual([...CLAUDE_INJECTED_PREFIXES, ...CODEX_INJECTED_PREFIXES]);
    expect(/const SUMMARY_OPENING = '([^']*)';/.exec(source)?.[1]).toBe(CLAUDE_SUMMARY_OPENING);
  });
});

describe('skimClaudeLine', () => {
  const skim = (text: string) => skimClaudeLine(Buffer.from(text, 'utf8'));

  it('reads needed fields as JSON.parse does and replaces other composites by SKIPPED', () => {
    const r = skim('{"type":"user","uuid":"a\\u00e9","parentUuid":null,"isMeta":true,"cwd":{"x":[1,{"y":"\\""}]},"n":-1.5e3,"message":{"content":[{"type":"text","text":"hi"},7],"usage":{"input_tokens":12}}}');
    expect(r).toBeDefined();
    expect(r!.type).toBe('user');
    expect(r!.uuid).toBe('a\u00e9');
    expect(r!.parentUuid).toBeNull();
    expect(r!.isMeta).toBe(true);
    expect(r!.cwd).toBe(SKIPPED);
    const message = r!.message as { content: unknown[]; usage: { input_tokens: unknown } };
    expect(message.content[0]).toMatchObject({ type: 'text', text: 'hi' });
    expect(message.content[1]).toBeNull();
    expect(message.usage.input_tokens).toBe(12);
  });

  it('keeps a head of long texts, and the whole text when the head is blank', () => {
    const body = `${'x'.repeat(5000)}`;
    const long = skim(JSON.stringify({ type: 'user', message: { content: body } }));
    expect((long!.message as { content: string }).content.length).toBeLessThan(2100);
    expect((long!.message as { content: string }).content.length).toBeGreaterThanOrEqual(200);
    const blankHead = `${'\u00a0 \n'.repeat(3000)}z`;
    const blank = skim(JSON.stringify({ type: 'user', message: { content: blankHead } }));
    expect((blank!.message as { content: string }).content).toBe(blankHead);
    // A head cut inside an escape or a multi-byte character still decodes.
    for (let shift = 0; shift < 8; shift += 1) {
      const text = `${'a'.repeat(2040 + shift)}\u00e9\ud83d\ude00\u0001"\\${'b'.repeat(3000)}`;
      const r = skim(JSON.stringify({ type: 'user', message: { content: [{ type: 'text', text }] } }));
      const head = (r!.message as { content: Array<{ text: string }> }).content[0]!.text;
      expect(text.startsWith(head)).toBe(true);
    }
  });

  it('is unsure (undefined) on anything JSON.parse rejects or that it cannot read exactly', () => {
    for (const bad of [
      '',
      '[1]',
      '"x"',
      '{"type":"user"',
      '{"type":"user"} x',
      '{"type":"us\ter"}',
      '{"type":"user","x":[1,}',
      '{"type":"user","x":01}',
      '{"type":"user","x":"\\q"}',
      '{"type":"user","x":tru}',
      '{"type":"a","type":"b"}',
      '{"typ\\u0065":"user"}',
      '\ufeff{"type":"user"}',
    ]) {
      expect(skim(bad), bad).toBeUndefined();
    }
    expect(skim(' {"type":"user","x":[{"a":[[]]},-0.5E+2,null,false]} \r')).toBeDefined();
  });
});

describe('counting a file in place (readSession reads it into the wasm scanner)', () => {
  it('reads small files after a large one (the scanner is reused) as JSON.parse does', async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { readSession } = await import('./read.js');
    const main = readFileSync(join(FIXTURES, 'claude-linear.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    const parts: string[] = [];
    for (let copy = 1; copy <= 400; copy += 1) {
      for (const line of main) parts.push(line.replace(/"(uuid|parentUuid|logicalParentUuid)": ?"([0-9a-f]{8})/g, (_m, key: string, head: string) => `"${key}":"${(Number.parseInt(head, 16) ^ copy).toString(16).padStart(8, '0')}`));
    }
    const dir = mkdtempSync(join(tmpdir(), 'echolens-reuse-'));
    try {
      const big = join(dir, 'big.jsonl');
      writeFileSync(big, `${parts.join('\n')}\n`);
      const expected = (file: string) => {
        const parsed = new ClaudeParser(file, { keepContent: false, skimFields: false });
        readFileSync(file, 'utf8').split('\n').forEach((text, index) => {
          if (text !== '') parsed.line(index + 1, text);
        });
        const b = parsed.finish().builder;
        return { counters: b.counters, usage: b.usage, models: [...b.models].sort(), toolsUsed: b.toolsUsed, first: b.firstTimestamp, last: b.lastTimestamp };
      };
      const got = async (file: string) => {
        const s = await readSession(file, { tool: 'claude', content: 'none', subagents: false });
        return { counters: s.counters, usage: s.usage, models: s.models, toolsUsed: s.toolsUsed, first: s.firstTimestamp, last: s.lastTimestamp };
      };
      const bigSession = await readSession(big, { tool: 'claude', content: 'none', subagents: false });
      expect(bigSession.lines).toBeGreaterThan(2000);
      for (const file of claudeFixtures()) {
        // Each after the large file: a scanner whose tables grew and were dropped.
        await readSession(big, { tool: 'claude', content: 'none', subagents: false });
        expect(await got(file), file).toEqual(expected(file));
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives what JSON.parse of every line gives, across 1 MB chunk edges, CRLF and invalid UTF-8 lines', async () => {
    const { mkdtempSync, rmSync, writeFileSync } = await import('node:fs');
    const { tmpdir } = await import('node:os');
    const { readSession } = await import('./read.js');
    const sources = claudeFixtures().map((f) => readFileSync(f, 'utf8').split('\n').filter((l) => l !== ''));
    const parts: Buffer[] = [];
    let copy = 0;
    let size = 0;
    let previousLast: string | undefined;
    let invalidWritten = false;
    // One long conversation: copies of the main fixture, each chained to the one before.
    const main = readFileSync(join(FIXTURES, 'claude-linear.jsonl'), 'utf8').split('\n').filter((l) => l !== '');
    // Ends with a main copy: the main chain is walked back from the last leaf.
    while (size < 3.5 * 1024 * 1024 || copy % 4 === 0) {
      copy += 1;
      const lines = copy % 4 === 0 ? sources[copy % sources.length]! : main;
      let last: string | undefined;
      for (const line of lines) {
        // Fresh uuids per copy (else every copy would be a replay), some long lines, some CRLF.
        let text = line.replace(/"(uuid|parentUuid|logicalParentUuid)": ?"([0-9a-f]{8})/g, (_m, key: string, head: string) => `"${key}":"${(Number.parseInt(head, 16) ^ copy).toString(16).padStart(8, '0')}`);
        if (previousLast !== undefined && lines === main) text = text.replace(/"parentUuid": ?null/, `"parentUuid":"${previousLast}"`);
        last = /"uuid": ?"([^"]+)"/.exec(text)?.[1] ?? last;
        if (copy % 13 === 0 && last === undefined) text = text.replace(/"content": ?"/, `"content":"${'pad '.repeat(20_000)}`);
        const piece = Buffer.from(`${text}${copy % 5 === 0 ? '\r\n' : '\n'}`);
        parts.push(piece);
        size += piece.length;
      }
      if (lines === main) previousLast = last;
      // One invalid UTF-8 line, in the last megabyte: the chunks before it are read in place.
      if (size > 3 * 1024 * 1024 && !invalidWritten) {
        parts.push(Buffer.from([0x7b, 0x22, 0xff, 0xfe, 0x22, 0x7d, 0x0a]));
        invalidWritten = true;
      }
    }
    const bytes = Buffer.concat(parts);
    const dir = mkdtempSync(join(tmpdir(), 'echolens-skim-'));
    try {
      const file = join(dir, 'big.jsonl');
      writeFileSync(file, bytes);
      const session = await readSession(file, { tool: 'claude', content: 'none', subagents: false });
      const parsed = new ClaudeParser(file, { keepContent: false, skimFields: false });
      bytes
        .toString('utf8')
        .split('\n')
        .forEach((text, index) => {
          const line = text.endsWith('\r') ? text.slice(0, -1) : text;
          if (line !== '') parsed.line(index + 1, line);
        });
      const expected = parsed.finish();
      const b = expected.builder;
      expect(session.lines).toBe(bytes.toString('utf8').split('\n').length - 1);
      expect(session.counters).toEqual(b.counters);
      expect(session.compactions.map((c) => [c.raw.line, c.atMessage, c.counters])).toEqual(b.compactions.map((c) => [c.raw.line, c.atMessage, c.counters]));
      expect(session.usage).toEqual(b.usage);
      expect(session.models).toEqual([...b.models].sort());
      expect(session.toolsUsed).toEqual(b.toolsUsed);
      expect([session.firstTimestamp, session.lastTimestamp]).toEqual([b.firstTimestamp, b.lastTimestamp]);
      expect(session.replayedMessages).toBe(b.replayedMessages);
      // The reader adds one warning per invalid UTF-8 line; the rest are the parser's.
      const own = session.warnings.filter((w) => !w.message.startsWith('invalid UTF-8')).map((w) => [w.line, w.message]);
      expect(own).toEqual(expected.warnings.map((w) => [w.line, w.message]));
      expect(session.counters.agentSteps).toBeGreaterThan(1000);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 60_000);
});
