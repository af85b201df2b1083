import { definedFields } from '../core/copy-defined.js';
import type { SleepFn } from '../models/retry.js';
import { defaultAdapterFactory } from '../store/runner-options.js';
import type { CostFn, RunCellsOptions } from '../store/runner-types.js';
import type { RunPolicy } from './cell-source.js';
import type { EngineOptions } from './engine.js';

/** The engine options every source shares, from `runCells` options. */
export function engineOptionsOf(
  options: RunCellsOptions,
  resolved: { now: () => number; sleep: SleepFn; costOf: CostFn },
): Pick<EngineOptions, 'adapterFor' | 'costOf' | 'retry' | 'signal' | 'hardSignal' | 'sleep' | 'now' | 'random' | 'cacheTtl' | 'openaiCacheRetention'> {
  return {
    adapterFor: options.adapterFor ?? defaultAdapterFactory,
    costOf: resolved.costOf,
    ...definedFields(options, ['retry', 'signal', 'hardSignal', 'random']),
    sleep: resolved.sleep,
    now: resolved.now,
    ...definedFields(options.cache ?? {}, ['cacheTtl', 'openaiCacheRetention']),
  };
}

/** A run's limits from `runCells` options (the shared store keeps the same fields in the run's settings). */
export function runPolicyOf(options: Pick<RunCellsOptions, 'maxCostUsd' | 'spentBeforeUsd' | 'limits' | 'fatalBurst' | 'assumedMaxOutputTokens'>): RunPolicy {
  return {
    ...definedFields(options, ['maxCostUsd', 'spentBeforeUsd', 'limits']),
    fatalBurst: options.fatalBurst ?? 3,
    assumedMaxOutputTokens: options.assumedMaxOutputTokens ?? 4096,
  };
}
