#!/usr/bin/env node
// Dependency rules of src/ (DEVELOPING.md "Module rules"), enforced by `npm run lint`:
//  1. no import circles between modules, type-only imports included;
//  2. shared folders never import an audit folder or the registration of the built-in audits
//     (an audit plugs into shared code only through its Audit object, registered at the entry points).
// Test files (*.test.ts) are entry points like the CLI: they may register audits, and nothing imports them.
// Usage: node tools/check-deps.mjs [--verbose]
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { dirname, join, relative, resolve, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

const root = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const src = join(root, 'src');
const SHARED = ['core', 'stats', 'metrics', 'store', 'execution', 'models', 'sessions', 'materials', 'experiment', 'report', 'gate'];
const AUDITS = ['persona-drift', 'memory-drift', 'continuation'];
/** Files that register the built-in audits: only entry points may import them. */
const REGISTRATION = ['audits.ts'];

function listFiles(dir) {
  const out = [];
  for (const name of readdirSync(dir)) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) out.push(...listFiles(path));
    else if (/\.(ts|mts)$/u.test(name) && !name.endsWith('.d.ts')) out.push(path);
  }
  return out;
}

// Static imports and re-exports (type-only ones too) and dynamic import('…') with a literal path.
const IMPORT = /(?:^|[\s;])(?:import|export)\s+(?:type\s+)?(?:[^'";]*?\s+from\s+)?['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/gu;

function stripComments(text) {
  return text.replace(/\/\*[\s\S]*?\*\//gu, '').replace(/(^|[^:'"`\\])\/\/.*$/gmu, '$1');
}

function resolveImport(from, spec) {
  if (!spec.startsWith('.')) return null;
  const base = resolve(dirname(from), spec);
  for (const candidate of [base.replace(/\.js$/u, '.ts'), base.replace(/\.mjs$/u, '.mts'), `${base}.ts`, join(base, 'index.ts')]) {
    try {
      if (statSync(candidate).isFile()) return candidate;
    } catch {}
  }
  return null;
}

const isTest = (file) => /\.test\.ts$/u.test(file);
const rel = (file) => relative(src, file).split(sep).join('/');
const topFolder = (file) => {
  const parts = rel(file).split('/');
  return parts.length > 1 ? parts[0] : null;
};

const files = listFiles(src);
const graph = new Map();
for (const file of files) {
  const targets = new Set();
  const text = stripComments(readFileSync(file, 'utf8'));
  for (const match of text.matchAll(IMPORT)) {
    const target = resolveImport(file, match[1] ?? match[2]);
    if (target !== null) targets.add(target);
  }
  graph.set(file, [...targets]);
}

// Rule 2: shared → audit folder or registration.
const crossings = [];
for (const [file, targets] of graph) {
  if (isTest(file) || !SHARED.includes(topFolder(file))) continue;
  for (const target of targets) {
    if (AUDITS.includes(topFolder(target)) || REGISTRATION.includes(rel(target))) crossings.push(`${rel(file)} → ${rel(target)}`);
  }
}

// Rule 1: strongly connected components with more than one file (or a self-import) are circles (Tarjan).
let index = 0;
const stack = [];
const info = new Map();
const circles = [];
function connect(v) {
  const node = { index, low: index, onStack: true };
  index++;
  info.set(v, node);
  stack.push(v);
  for (const w of graph.get(v) ?? []) {
    const other = info.get(w);
    if (other === undefined) {
      connect(w);
      node.low = Math.min(node.low, info.get(w).low);
    } else if (other.onStack) node.low = Math.min(node.low, other.index);
  }
  if (node.low === node.index) {
    const component = [];
    let w;
    do {
      w = stack.pop();
      info.get(w).onStack = false;
      component.push(w);
    } while (w !== v);
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) circles.push(component.map(rel).sort());
  }
}
for (const file of files) if (!info.has(file)) connect(file);

const verbose = process.argv.includes('--verbose');
for (const circle of circles) {
  console.error(
    `import circle of ${circle.length} files:${verbose || circle.length <= 8 ? `\n  ${circle.join('\n  ')}` : ` ${circle.slice(0, 8).join(', ')}, …`}`,
  );
}
for (const crossing of crossings) console.error(`shared folder imports an audit or the registration: ${crossing}`);
console.log(
  `check-deps: ${files.length} files, ${circles.length} import circles (${circles.reduce((n, c) => n + c.length, 0)} files), ${crossings.length} shared → audit imports`,
);
process.exitCode = circles.length > 0 || crossings.length > 0 ? 1 : 0;
