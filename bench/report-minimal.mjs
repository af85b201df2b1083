// The baseline of bench/report-speed.bench.ts: the least a persona report must do, as a user would
// write it in a few lines. Reads every cell of the store's latest persona run (labels, status,
// answer), parses every judge verdict, and per target the drift gap (mean score real − filler over
// probe items) with a percentile bootstrap over items (B from the run's config). Prints JSON.
import Database from 'better-sqlite3';

const db = new Database(process.argv[2], { readonly: true });
const run = db.prepare(`SELECT id, manifest FROM runs WHERE experiment = 'persona' ORDER BY started_at DESC LIMIT 1`).get();
const B = JSON.parse(run.manifest).config?.analysis?.B ?? 2000;
const rows = db.prepare('SELECT rc.labels, c.key, c.status, c.text FROM run_cells rc JOIN cells c ON c.key = rc.key WHERE rc.run_id = ?').all(run.id);
const scores = new Map(); // target cell key → judge score
const targets = [];
for (const row of rows) {
  const labels = JSON.parse(row.labels);
  if (labels.stage === 'judge' && row.status === 'done') {
    const score = JSON.parse(row.text).score;
    if (typeof score === 'number') scores.set(labels.targetKey, score);
  } else if (labels.stage === 'target') targets.push({ key: row.key, labels });
}
const byTarget = new Map(); // target → item → { real: [], filler: [] }
for (const { key, labels } of targets) {
  const score = scores.get(key);
  if (score === undefined || (labels.arm !== 'real' && labels.arm !== 'filler')) continue;
  const items = byTarget.get(labels.target) ?? new Map();
  byTarget.set(labels.target, items);
  const item = items.get(labels.item) ?? { real: [], filler: [] };
  items.set(labels.item, item);
  item[labels.arm].push(score);
}
const mean = (xs) => xs.reduce((a, b) => a + b, 0) / xs.length;
let seed = 1;
const random = () => {
  seed = (seed * 16807) % 2147483647;
  return (seed - 1) / 2147483646;
};
const out = {};
for (const [target, items] of byTarget) {
  const gaps = [...items.values()].filter((i) => i.real.length > 0 && i.filler.length > 0).map((i) => mean(i.real) - mean(i.filler));
  const boot = [];
  for (let b = 0; b < B; b++) {
    let sum = 0;
    for (let i = 0; i < gaps.length; i++) sum += gaps[Math.floor(random() * gaps.length)];
    boot.push(sum / gaps.length);
  }
  boot.sort((a, b) => a - b);
  out[target] = { gap: mean(gaps), ci: [boot[Math.floor(0.025 * B)], boot[Math.ceil(0.975 * B) - 1]], units: gaps.length };
}
console.log(JSON.stringify({ cells: rows.length, verdicts: scores.size, targets: out }));
