#!/usr/bin/env node
/**
 * Long tasks in a V8 CPU profile (`node --cpu-prof`): stretches of consecutive samples in which
 * the thread was not idle, longer than a threshold (default 20 ms), with the functions that took
 * most of each (self time) and the outermost of our own frames in them. Used to find what holds
 * the reward server's event loop (docs/hostile-input.md#the-reward-server).
 *   node tools/cpu-long-tasks.mjs PROFILE.cpuprofile [thresholdMs] [LATE_TURNS.jsonl]
 * A stretch's length is wall time between samples: on a busy machine it includes time the thread
 * waited for a core, so read it beside the load. A stretch is not a task: work that yields with
 * setImmediate never lets the thread go idle, yet lets I/O in between. The late turns recorded by
 * bench/long-task-probe.mjs are the real long tasks: given their file, each is listed with the
 * functions sampled during it.
 */
import { readFileSync } from 'node:fs';

const [file, thresholdArg, turnsFile] = process.argv.slice(2);
if (file === undefined) {
  process.stderr.write('usage: node tools/cpu-long-tasks.mjs PROFILE.cpuprofile [thresholdMs]\n');
  process.exit(2);
}
const threshold = Number(thresholdArg ?? 20);
const profile = JSON.parse(readFileSync(file, 'utf8'));
const nodes = new Map(profile.nodes.map((node) => [node.id, node]));
const parent = new Map();
for (const node of profile.nodes) for (const child of node.children ?? []) parent.set(child, node.id);

const name = (node) => {
  const { functionName, url, lineNumber } = node.callFrame;
  const where = url ? `${url.replace(/^.*\/(src|dist|node_modules)\//, '$1/')}:${lineNumber + 1}` : '';
  return `${functionName || '(anonymous)'}${where ? ` ${where}` : ''}`;
};
/** The outermost frame of this project's code (src/ or dist/) on a sample's stack. */
const ownRoot = (id) => {
  let found;
  for (let at = id; at !== undefined; at = parent.get(at)) {
    const url = nodes.get(at).callFrame.url;
    if (/\/(src|dist)\//.test(url) && !/node_modules/.test(url)) found = at;
  }
  return found === undefined ? '(no own frame)' : name(nodes.get(found));
};

const tasks = [];
let current = null;
const { samples, timeDeltas } = profile;
let clock = 0;
for (let i = 0; i < samples.length; i++) {
  clock += timeDeltas[i] / 1000;
  const node = nodes.get(samples[i]);
  // A sample's delta is the time since the previous one: charge it to this sample.
  const dt = (timeDeltas[i + 1] ?? 0) / 1000;
  const idle = node.callFrame.functionName === '(idle)';
  if (idle) {
    if (current !== null) tasks.push(current);
    current = null;
    continue;
  }
  current ??= { startMs: 0, ms: 0, self: new Map(), roots: new Map() };
  if (current.ms === 0) current.startMs = clock;
  current.ms += dt;
  const self = name(node);
  current.self.set(self, (current.self.get(self) ?? 0) + dt);
  const root = ownRoot(samples[i]);
  current.roots.set(root, (current.roots.get(root) ?? 0) + dt);
}
if (current !== null) tasks.push(current);

const long = tasks.filter((t) => t.ms > threshold);
const total = tasks.reduce((a, t) => a + t.ms, 0);
const top = (map, n) =>
  [...map.entries()]
    .sort((a, b) => b[1] - a[1])
    .slice(0, n)
    .map(([k, v]) => `${v.toFixed(1)} ${k}`);
console.log(`${tasks.length} tasks, ${total.toFixed(0)} ms busy; ${long.length} longer than ${threshold} ms`);
for (const task of long.sort((a, b) => b.ms - a.ms)) {
  console.log(`\n${task.ms.toFixed(1)} ms at ${task.startMs.toFixed(0)} ms`);
  console.log(`  self:  ${top(task.self, 6).join('\n         ')}`);
  console.log(`  roots: ${top(task.roots, 4).join('\n         ')}`);
}

if (turnsFile !== undefined) {
  const turns = readFileSync(turnsFile, 'utf8')
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line));
  // Sample times on the monotonic clock (µs), as the probe records them.
  const at = [];
  let t = profile.startTime;
  for (let i = 0; i < samples.length; i++) {
    t += timeDeltas[i];
    at.push(t);
  }
  console.log(`\n${turns.length} late turns (> 20 ms) recorded by the probe`);
  for (const turn of turns.sort((a, b) => b.lateMs - a.lateMs)) {
    const self = new Map();
    const roots = new Map();
    for (let i = 0; i < samples.length; i++) {
      if (at[i] < turn.startUs || at[i] > turn.endUs) continue;
      const dt = (timeDeltas[i + 1] ?? 0) / 1000;
      const node = nodes.get(samples[i]);
      if (node.callFrame.functionName === '(idle)') continue;
      self.set(name(node), (self.get(name(node)) ?? 0) + dt);
      const root = ownRoot(samples[i]);
      roots.set(root, (roots.get(root) ?? 0) + dt);
    }
    console.log(`\nlate ${turn.lateMs} ms (ran ${turn.ranMs}, waited ${turn.waitedMs}) at ${((turn.startUs - profile.startTime) / 1000).toFixed(0)} ms`);
    console.log(`  self:  ${top(self, 6).join('\n         ')}`);
    console.log(`  roots: ${top(roots, 4).join('\n         ')}`);
  }
}
