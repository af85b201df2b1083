// Public API of src/memory-drift/mitigation/ (DriftLens §5, App. I): DPO data and the GRPO reward server.
export {
  buildCandidatePlan,
  buildDpoPromptMessages,
  DPO_CANDIDATE_PARAMS,
  DPO_REASONING_INSTRUCTION,
  samplePersonas,
} from './candidates.js';
export type { CandidatePlan, CandidatePlanOptions, DpoPrompt } from './candidates.js';
export { dpoConfigSchema, loadDpoConfig } from './dpo-config.js';
export type { DpoConfig } from './dpo-config.js';
export {
  buildDpoJudgeMessages,
  buildDpoJudgeReaskMessages,
  createDpoJudgeSimProfile,
  DPO_JUDGE_PARAMS,
  DPO_JUDGE_SYSTEM_PROMPT,
  parseDpoJudgeOutput,
} from './dpo-judge.js';
export type { DpoJudgement, DpoJudgeParse, DpoJudgeVerdict } from './dpo-judge.js';
export { runDpoPairs, writeDpoOutputs } from './dpo.js';
export type { DpoRunResult } from './dpo.js';
export { evaluateHeldOut, parseHeldOut, renderEvaluationMarkdown } from './evaluation.js';
export type { EvaluateOptions, HeldOutRow, HeldOutSummary } from './evaluation.js';
export { mixPreferences, quickSubset, renderDataCardMarkdown, toJsonl, toOpenRlhfRow, toTrlRow } from './export.js';
export type { DataCard, MixResult, OpenRlhfPreferenceRow, PreferenceRecord, TrlPreferenceRow } from './export.js';
export { buildReferences } from './references.js';
export type { ReferenceBuildResult, ReferenceRecord } from './references.js';
export { buildRewriteMessages, buildRewriteReaskMessages, createRewriterSimProfile, DPO_REWRITE_PARAMS, parseRewriteOutput } from './rewrite.js';
export type { RewriteRole } from './rewrite.js';
export { CachedLabeler } from './reward-labeler.js';
export type { CachedLabelerOptions, LabelerCacheStats, LabelOutcome } from './reward-labeler.js';
export { fallbackReward, responseFromQuery, scoreBatch, startRewardServer } from './reward-server.js';
export type { RewardServerOptions, RunningRewardServer, ScoredItem } from './reward-server.js';
export {
  checkRewardWeights,
  PAPER_REWARD_WEIGHTS,
  parseReferences,
  questionIdFromLabel,
  REWARD_PRESETS,
  referenceFromLabel,
  scoreLabelledResponse,
  textComponents,
  worstCaseReward,
} from './reward.js';
export type { DriftOrientation, ReferenceMap, RewardComponents, RewardPreset, RewardWeights, ResolvedRewardWeights } from './reward.js';
export { groundTruthString, verlRowsToParquet } from './verl-parquet.js';
export {
  buildTrainFiles,
  DPO_PAPER_HYPERPARAMETERS,
  GRPO_PRESETS,
  resolveDpoHyperparameters,
  resolveGrpoHyperparameters,
  TRAIN_ENGINES,
  trainConfigSchema,
  verlRewardClient,
} from './train-config.js';
export type { DpoHyperparameters, GrpoHyperparameters, TrainConfig, TrainEngine, TrainFile } from './train-config.js';
export { selectDpoPair, selectReferenceCandidate } from './select.js';
export type { JudgedCandidate, PairOutcome, SelectedPair } from './select.js';
export { registerMitigationSimProfiles } from './sims.js';
export { filterExternalPairs, parseExternalPreferences } from './tulu.js';
export type { ExternalDropReason, ExternalFilterResult, ExternalPair, ExternalParseOptions } from './tulu.js';

import { registerMitigationSimProfiles } from './sims.js';

// The `sim:` adapter finds profiles by name; registering is cheap.
registerMitigationSimProfiles();
