// mixedModel cost grows linearly in N (per-group sufficient statistics, O(N·p²) once, then
// O(G·p²) per likelihood evaluation). Prints time at N and 10·N and their ratio (≈ 10 if linear).
import { mixedModel } from '../src/stats/index.js';

const smoke = process.env.BENCH_SMOKE === '1';
const baseRows = smoke ? 500 : 20_000;
const levels = ['no_perturbation', 'filler', 'persona_age', 'persona_job', 'whitespace'];

function makeRows(n: number): { y: number; level: string; question: string }[] {
  let state = 12345;
  const uniform = () => {
    state = (state * 16807) % 2147483647;
    return state / 2147483647;
  };
  const groups = Math.max(2, Math.floor(n / 20));
  const shift = Array.from({ length: groups }, () => uniform() - 0.5);
  return Array.from({ length: n }, (_, i) => {
    const g = i % groups;
    const level = levels[Math.floor(uniform() * levels.length)]!;
    return { y: shift[g]! + (level === 'filler' ? 0.1 : 0) + uniform(), level, question: `q${g}` };
  });
}

function timeFit(n: number, repeats: number): number {
  const rows = makeRows(n);
  const options = { response: 'y', fixed: 'level', group: 'question', reference: 'no_perturbation' };
  mixedModel(rows, options); // warm-up
  const start = process.hrtime.bigint();
  for (let r = 0; r < repeats; r++) mixedModel(rows, options);
  return Number(process.hrtime.bigint() - start) / 1e6 / repeats;
}

const repeats = smoke ? 2 : 10;
const small = timeFit(baseRows, repeats);
const large = timeFit(baseRows * 10, repeats);
console.log(`mixedModel N=${baseRows}: ${small.toFixed(2)} ms (baseline)`);
console.log(`mixedModel N=${baseRows * 10}: ${large.toFixed(2)} ms`);
console.log(`ratio 10·N / N: ${(large / small).toFixed(2)} (≤ 10 means at most linear in N)`);
