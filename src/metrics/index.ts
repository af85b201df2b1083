// Public API of src/metrics/ (re-exported from the package root).
export { dtw } from './dtw.js';
export type { DtwOptions, DtwPath, DtwResult, DtwScore, SymbolCostFunction, SymbolEmbeddings } from './dtw.js';
export { editDistance, normalizedEditDistance } from './edit-distance.js';
export { jensenShannon } from './jensen-shannon.js';
export { sri, sriDrift, sriRobustness } from './sri.js';
export { answerContent, lexicalDiversity } from './lexical-diversity.js';
export { formatReward, stepContents } from './format-reward.js';
export { countSyllables, fleschReadingEase, readabilityReward } from './readability.js';
export type { ReadabilityCounts } from './readability.js';
export { ANTI_DISTRACTION_WEIGHTS, antiDistractionParts, antiDistractionReward } from './anti-distraction.js';
export type { AntiDistractionParts } from './anti-distraction.js';
export { dpoLoss, grpoAdvantages, selectPreferencePair } from './training.js';
export type { PreferenceJudgement, PreferenceSelection } from './training.js';
export type { SymbolSequence } from './validate.js';
export { cosineDistance, FASTDTW_FLAVORS, fastdtw, PreparedSymbolEmbeddings, referenceDtw } from './fastdtw.js';
export type { FastDtwCost, FastDtwFlavor, FastDtwOptions, FastDtwResult, FastDtwVector, ReferenceDtwResult, SymbolEmbedder } from './fastdtw.js';
