// Public API of src/stats/ (re-exported from the package root).
export { welchTTest } from './welch.js';
export type { WelchResult } from './welch.js';
export { cohensD } from './cohens-d.js';
export { pearson, spearman, averageRanks } from './correlation.js';
export type { PearsonResult, SpearmanResult } from './correlation.js';
export { wilcoxonSignedRank } from './wilcoxon.js';
export type { WilcoxonResult, WilcoxonMethod } from './wilcoxon.js';
export { mixedModel, fitRandomIntercept } from './mixed-model.js';
export type {
  MixedModelOptions,
  MixedModelResult,
  MixedModelMethod,
  FixedEffectEstimate,
  RandomInterceptDesign,
  RandomInterceptFit,
} from './mixed-model.js';
export { varianceDecomposition } from './variance-decomposition.js';
export type { VarianceDecomposition } from './variance-decomposition.js';
export { tost } from './tost.js';
export type { TostOptions, TostResult } from './tost.js';
export {
  tCdf,
  tQuantile,
  standardNormalCdf,
  chisquareCdf,
  fCdf,
  tTwoSidedP,
  normalTwoSidedP,
} from './distributions.js';
// Resampling and agreement (rng, bootstraps, d_rel, drift gap, sign-flip, BH/Holm, letters, κ).
export { rng, rngFromState } from './rng.js';
export type { Rng } from './rng.js';
export { quantileLinear, bootstrapPValue } from './resampling-common.js';
export type { ResamplingOptions, Interval } from './resampling-common.js';
export { bootstrapCI } from './bootstrap.js';
export type { BootstrapResult } from './bootstrap.js';
export { clusterBootstrap } from './cluster-bootstrap.js';
export type { ClusterBootstrapOptions, ClusterBootstrapResult, ClusterKey } from './cluster-bootstrap.js';
export { dRel } from './d-rel.js';
export type { ClusteredValue, DRelInput, DRelResult } from './d-rel.js';
export { gapBootstrap } from './gap-bootstrap.js';
export type { ArmSummary, GapBootstrapInput, GapBootstrapOptions, GapBootstrapResult, PositionScores } from './gap-bootstrap.js';
export { signFlipTest } from './sign-flip.js';
export type { SignFlipOptions, SignFlipResult } from './sign-flip.js';
export { signFlipInterval } from './sign-flip-interval.js';
export type { SignFlipInterval, SignFlipIntervalOptions } from './sign-flip-interval.js';
export { benjaminiHochberg, holm } from './multiple-testing.js';
export { compactLetterDisplay } from './letters.js';
export type { SignificantPairs } from './letters.js';
export { agreement, fleissKappa, signAgreement } from './agreement.js';
export type { AgreementOptions, AgreementResult, SignAgreementResult, SignLabel } from './agreement.js';
export { summarizeCalibration, rateWithError, withinNominal, minimumDetectableEffect } from './calibration.js';
export type { CalibrationOutcome, RateWithError, TestCalibration } from './calibration.js';
