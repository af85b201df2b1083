#!/usr/bin/env python3
"""Independent re-implementation of the ContextEcho reference prefix builder (reference-digest A2.3 #1,
A4.1) in plain Python, run on a linear Claude Code fixture. Writes the flat prefix at every agent step
so the TypeScript renderer can be checked against it (src/sessions/flat-golden.test.ts).

Usage: python3 tools/golden/sessions_flat_prefix.py > src/sessions/__fixtures__/claude-linear.flat.json
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURE = os.path.join(HERE, '..', '..', 'src', 'sessions', '__fixtures__', 'claude-linear.jsonl')
MAX_CHARS = 30000


def load(path):
    rows = []
    with open(path, encoding='utf-8') as f:
        for line in f:
            line = line.strip()
            try:
                rows.append(json.loads(line) if line else None)
            except json.JSONDecodeError:
                rows.append(None)
    return rows


def turn_to_line(rows):
    """Agent steps: every assistant row; user rows with non-empty text and no tool_result."""
    mapping, turn = {}, 0
    for i, row in enumerate(rows):
        if not row:
            continue
        counted = False
        if row.get('type') == 'assistant':
            counted = True
        elif row.get('type') == 'user':
            content = (row.get('message') or {}).get('content')
            if isinstance(content, str):
                counted = bool(content.strip())
            elif isinstance(content, list):
                has_text = any(b.get('type') == 'text' and (b.get('text') or '').strip() for b in content if isinstance(b, dict))
                has_result = any(b.get('type') == 'tool_result' for b in content if isinstance(b, dict))
                counted = has_text and not has_result
        if counted:
            turn += 1
            mapping[turn] = i
    return mapping, turn


def flatten(content):
    if isinstance(content, str):
        return content
    parts = []
    for b in content or []:
        if not isinstance(b, dict):
            continue
        if b.get('type') == 'text':
            parts.append(b.get('text') or '')
        elif b.get('type') == 'tool_use':
            parts.append('[tool_use %s: %s]' % (b.get('name'), json.dumps(b.get('input'))[:200]))
        elif b.get('type') == 'tool_result':
            c = b.get('content')
            if isinstance(c, list):
                c = '\n'.join(x.get('text', '') for x in c if isinstance(x, dict) and x.get('type') == 'text')
            parts.append('[tool_result: %s]' % (c or '')[:200])
    return '\n'.join(parts)


def prefix_at(rows, line):
    boundary, summary = None, None
    for i in range(line, -1, -1):
        r = rows[i]
        if r and r.get('type') == 'system' and r.get('subtype') == 'compact_boundary':
            boundary = i
            break
    parts = []
    if boundary is not None:
        for j in range(boundary + 1, min(boundary + 5, len(rows))):
            r = rows[j]
            c = r and (r.get('message') or {}).get('content')
            if r and r.get('type') == 'user' and isinstance(c, str) and 'summary' in c.lower():
                summary = c
                break
        if summary:
            parts.append('--- COMPACTION SUMMARY (resumed session) ---\n' + summary)
    start = boundary + 2 if boundary is not None else 0
    for r in rows[start:line + 1]:
        if not r or r.get('type') not in ('user', 'assistant'):
            continue
        text = flatten((r.get('message') or {}).get('content'))
        if not text.strip():
            continue
        header = '--- USER ---' if r['type'] == 'user' else '--- ASSISTANT ---'
        parts.append(header + '\n' + text)
    out = '\n\n'.join(parts)
    return out[-MAX_CHARS:] if len(out) > MAX_CHARS else out


def main():
    rows = load(FIXTURE)
    mapping, total = turn_to_line(rows)
    result = {'totalAgentSteps': total, 'prefixes': {str(t): prefix_at(rows, mapping[t]) for t in range(1, total + 1)}}
    json.dump(result, sys.stdout, ensure_ascii=False, indent=1)
    sys.stdout.write('\n')


if __name__ == '__main__':
    main()
