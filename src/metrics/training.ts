import { InvalidArgumentError } from '../core/errors.js';
import { describeValue, valueText, requireArray, requireFinite } from './validate.js';

/**
 * Group-standardized GRPO advantages (DriftLens eq. 11–13):
 * Â_k = (R_k − μ_R) / (σ_R + ε), μ_R the group mean and σ_R the population standard
 * deviation (divisor K). A group whose rewards are all equal gets all-zero advantages
 * (also when ε = 0, where eq. 11 would be 0/0).
 *
 * @param rewards the K ≥ 1 rewards of one group, finite numbers.
 * @param eps ε, a finite number ≥ 0 (default 1e-6).
 * @throws InvalidArgumentError naming `rewards` (not an array, empty, non-finite element) or `eps`.
 */
export function grpoAdvantages(rewards: readonly number[], eps = 1e-6): number[] {
  requireArray(rewards, 'rewards');
  requireFinite(eps, 'eps');
  if (eps < 0) throw new InvalidArgumentError('eps', `must be ≥ 0, got ${eps}`);
  const count = rewards.length;
  if (count === 0) throw new InvalidArgumentError('rewards', 'needs at least one reward');
  let sum = 0;
  let allEqual = true;
  for (let k = 0; k < count; k++) {
    const reward = rewards[k];
    if (typeof reward !== 'number' || !Number.isFinite(reward)) {
      throw new InvalidArgumentError('rewards', `element ${k} must be a finite number, got ${valueText(reward)}`);
    }
    sum += reward;
    if (reward !== rewards[0]) allEqual = false;
  }
  if (allEqual) return new Array<number>(count).fill(0);
  const mean = sum / count;
  let squares = 0;
  for (let k = 0; k < count; k++) {
    const deviation = rewards[k]! - mean;
    squares += deviation * deviation;
  }
  const scale = Math.sqrt(squares / count) + eps;
  return rewards.map((reward) => (reward - mean) / scale);
}

/** −log σ(x) = log(1 + e^(−x)), without overflow or cancellation for any finite x. */
function negativeLogSigmoid(x: number): number {
  return x >= 0 ? Math.log1p(Math.exp(-x)) : -x + Math.log1p(Math.exp(x));
}

type LogProbs = number | readonly number[];

function pairCount(values: readonly unknown[], names: readonly string[]): number {
  const scalar = typeof values[0] === 'number';
  const length = scalar ? 1 : Array.isArray(values[0]) ? values[0].length : -1;
  for (let v = 0; v < values.length; v++) {
    const value = values[v];
    const name = names[v]!;
    if (scalar) {
      requireFinite(value, name);
      continue;
    }
    if (!Array.isArray(value)) {
      throw new InvalidArgumentError(
        name,
        `expected ${v === 0 ? 'a number or an array of numbers' : 'an array like policyChosen'}, got ${describeValue(value)}`,
      );
    }
    if (value.length !== length) {
      throw new InvalidArgumentError(name, `has ${value.length} elements, policyChosen has ${length}`);
    }
    for (let i = 0; i < value.length; i++) requireFinite(value[i], `${name}[${i}]`);
  }
  if (length === 0) throw new InvalidArgumentError('policyChosen', 'needs at least one preference pair');
  return length;
}

/**
 * DPO loss (DriftLens eq. 6–7 / eq. 18) from summed sequence log-probabilities:
 * Δ = (log π_θ(y⁺) − log π_ref(y⁺)) − (log π_θ(y⁻) − log π_ref(y⁻)), loss = −log σ(β · Δ),
 * computed as a numerically stable softplus(−β·Δ) (finite for any finite input).
 *
 * Either all four log-probability arguments are numbers (one pair → its loss), or all four
 * are arrays of the same length ≥ 1 (one entry per pair → the mean loss over pairs, the
 * empirical expectation of eq. 6). Mixing numbers and arrays is an error.
 *
 * @param beta β > 0, finite.
 * @throws InvalidArgumentError naming the offending argument (or element, e.g. `refRejected[3]`).
 */
export function dpoLoss(policyChosen: LogProbs, policyRejected: LogProbs, refChosen: LogProbs, refRejected: LogProbs, beta: number): number {
  requireFinite(beta, 'beta');
  if (beta <= 0) throw new InvalidArgumentError('beta', `must be > 0, got ${beta}`);
  const values = [policyChosen, policyRejected, refChosen, refRejected];
  const count = pairCount(values, ['policyChosen', 'policyRejected', 'refChosen', 'refRejected']);
  const at = (value: LogProbs, i: number): number => (typeof value === 'number' ? value : value[i]!);
  let total = 0;
  for (let i = 0; i < count; i++) {
    const margin = at(policyChosen, i) - at(refChosen, i) - (at(policyRejected, i) - at(refRejected, i));
    const scaled = beta * margin;
    if (!Number.isFinite(scaled)) {
      throw new InvalidArgumentError('beta', `β·Δ overflows for pair ${i} (Δ = ${margin})`);
    }
    total += negativeLogSigmoid(scaled);
  }
  return total / count;
}

/** Judge scores of one DPO candidate response (§5.1): h, d and a. */
export interface PreferenceJudgement {
  /** h(y) ∈ {1, …, 5}. */
  readonly helpfulness: number;
  /** d(y): the response is distracted by the perturbation. */
  readonly distracted: boolean | 0 | 1;
  /** a(y): the response acknowledges that the perturbation is irrelevant. */
  readonly acknowledged: boolean | 0 | 1;
}

export interface PreferenceSelection<T> {
  /** y⁺ candidates: h = 5, d = 0, a = 1 (input order). */
  readonly chosen: T[];
  /** y⁻ candidates: h < 5 and (d = 1 or a = 0) (input order). */
  readonly rejected: T[];
}

function flag(value: unknown, argument: string): boolean {
  if (value === true || value === 1) return true;
  if (value === false || value === 0) return false;
  throw new InvalidArgumentError(argument, `expected a boolean or 0/1, got ${valueText(value)}`);
}

/**
 * Splits judged candidates into DPO chosen and rejected responses (DriftLens §5.1, App. I.1):
 * chosen iff h = 5 ∧ d = 0 ∧ a = 1; rejected iff h < 5 ∧ (d = 1 ∨ a = 0). A candidate can
 * be neither (e.g. h = 5 but distracted, or h < 5 with d = 0 ∧ a = 1); never both. Extra
 * fields of the candidates are kept (the same objects are returned).
 *
 * @throws InvalidArgumentError naming `candidates` or `candidates[i].<field>` (h not an
 *   integer in 1–5, d / a not boolean or 0/1).
 */
export function selectPreferencePair<T extends PreferenceJudgement>(candidates: readonly T[]): PreferenceSelection<T> {
  requireArray(candidates, 'candidates');
  const chosen: T[] = [];
  const rejected: T[] = [];
  for (let i = 0; i < candidates.length; i++) {
    const candidate: unknown = candidates[i];
    if (candidate === null || typeof candidate !== 'object') {
      throw new InvalidArgumentError(`candidates[${i}]`, `expected an object, got ${describeValue(candidate)}`);
    }
    const { helpfulness, distracted, acknowledged } = candidate as Record<string, unknown>;
    if (typeof helpfulness !== 'number' || !Number.isInteger(helpfulness) || helpfulness < 1 || helpfulness > 5) {
      throw new InvalidArgumentError(`candidates[${i}].helpfulness`, `expected an integer from 1 to 5, got ${valueText(helpfulness)}`);
    }
    const isDistracted = flag(distracted, `candidates[${i}].distracted`);
    const isAcknowledged = flag(acknowledged, `candidates[${i}].acknowledged`);
    if (helpfulness === 5 && !isDistracted && isAcknowledged) chosen.push(candidates[i]!);
    else if (helpfulness < 5 && (isDistracted || !isAcknowledged)) rejected.push(candidates[i]!);
  }
  return { chosen, rejected };
}
