// Public API of src/memory-drift/ (re-exported from the package root).
// Explicit names: generic helpers (CSV, JSON search, file reading) stay internal so that
// `export *` in src/index.ts cannot collide with other modules.
export {
  aggregateAnnotations,
  ANNOTATION_PROMPTS,
  buildOrthogonalityItems,
  exportAnnotationSheet,
  ORTHOGONALITY_ID_SEPARATOR,
  parseAnnotationSheet,
} from './annotations.js';
export type {
  AggregateOptions,
  AnnotationAgreement,
  AnnotationItem,
  AnnotationLabel,
  AnnotationSummary,
} from './annotations.js';
export {
  compileCurationMatcher,
  curateQuestion,
  loadBuiltinCurationKeywords,
  parseCurationKeywords,
  phraseRegex,
} from './curation.js';
export type {
  CurationKeywords,
  CurationMatcher,
  CurationResult,
  CurationVerdict,
  KeywordGroup,
  KeywordHit,
} from './curation.js';
export { builtinStimuliManifest, memoryDriftDataDir, readBuiltinDataFile } from './data-files.js';
export type { BuiltinDataFile, BuiltinDataName } from './data-files.js';
export { HF_DATASETS_SERVER_URL, loadHuggingFaceQuestions } from './hf-datasets.js';
export {
  analyzeMemory,
  designAdvice,
  MIN_QUESTIONS,
  elevationBootstrap,
  MEMORY_METRICS,
  MEMORY_REPORT_SCHEMA,
  sampleFromCellLabels,
  scoreTrajectories,
} from './analysis.js';
export type {
  ConditionCounts,
  ConditionSummary,
  Convergence,
  DRelEntry,
  DRelEstimate,
  ElevationOptions,
  ExclusionCount,
  InstrumentValidity,
  IntervalEstimate,
  LabelledSample,
  LabelledSampleStatus,
  MemoryAnalysisOptions,
  MemoryMaybe,
  MemoryMetric,
  MemoryObservation,
  MemoryReport,
  MetricAnalysis,
  MixedModelSummary,
  ObservationStatus,
  PairingPolicy,
  PairwiseComparison,
  PairwiseSummary,
  ScoredTrajectories,
  ScoreTrajectoriesOptions,
  TargetAnalysis,
  TierSummary,
  ValidityCheck,
  ValidityVerdict,
  Verdict,
} from './analysis.js';
export { labelAgreement, labelerReliability } from './reliability.js';
export type {
  CrossModelAgreement,
  LabelAgreement,
  LabelerReliability,
  LabelRecord,
  WithinModelAgreement,
  WordingAgreement,
} from './reliability.js';
export { markdownText as markdownCell } from '../report/markdown-text.js';
export { renderMemoryMarkdown, renderReliabilityMarkdown } from './document.js';
export type { HuggingFaceQuestionOptions } from './hf-datasets.js';
export {
  ALLOWED_LABELS_HEADER,
  buildLabelerMessages,
  buildLabelerReaskMessages,
  DEFAULT_LABELER_REASKS,
  LABELER_DEFAULT_PARAMS,
  LABELER_SYSTEM_PROMPT,
  nextLabelingStep,
  parseLabelerOutput,
  renderNumberedSteps,
} from './labeler.js';
export type {
  LabelerFailureReason,
  LabelingNext,
  LabelerParseOptions,
  LabelerParseResult,
  LabelerPromptOptions,
} from './labeler.js';
export {
  buildGenerationMessages,
  GENERATION_INSTRUCTION,
  GENERATION_SYSTEM_PROMPT,
  INJECTION_MODES,
  MEMORY_RESULT_CLOSE,
  MEMORY_RESULT_OPEN,
  MEMORY_TOOL_CALL,
  MEMORY_TOOL_FOLLOWUP,
  QUESTION_MARKER,
  SYSTEM_MEMORY_HEADER,
} from './messages.js';
export type { GenerationMessageOptions, InjectionMode } from './messages.js';
export {
  loadBuiltinOntology,
  loadOntologyFile,
  makeSymbol,
  ontologySymbols,
  parseOntology,
  parseSymbol,
  renderOntology,
  UNMAPPED,
  validateOntology,
} from './ontology.js';
export type { Ontology, OntologyCategory, OntologySubcategory } from './ontology.js';
export {
  listStimuli,
  loadBuiltinPerturbations,
  loadPerturbationsFile,
  NO_PERTURBATION,
  PERTURBATION_TIERS,
  parsePerturbationSet,
  validatePerturbationSet,
} from './perturbations.js';
export type {
  PerturbationCategory,
  PerturbationSet,
  PerturbationStimulus,
  PerturbationTier,
} from './perturbations.js';
export {
  assignSampleSeeds,
  buildGenerationPlan,
  buildLabelerCell,
  cellSeed,
  PAPER_GENERATION_PARAMS,
  SAMPLE_SEEDINGS,
  sharedSeedCells,
} from './plan.js';
export type { CellSeedIdentity, GenerationPlanOptions, GenerationRole, LabelerCellOptions, SampleSeeding } from './plan.js';
export {
  calibrateMemoryDesign,
  NULL_SCENARIO,
  PLANTED_SCENARIO,
  prepareDesign,
  reportOutcomes,
  runFamily,
  simulateDesignReport,
  simulateDesignSamples,
} from './calibrate.js';
export type { CalibrateMemoryOptions, CalibrationScenario, MemoryCalibration, ScenarioCalibration, SimulatedDesign } from './calibrate.js';
export { detectRefusal, MAX_REFUSAL_CHARS } from './refusals.js';
export type { RefusalVerdict } from './refusals.js';
export {
  buildRefusalJudgeMessages,
  combineRefusal,
  createRefusalJudgeSimProfile,
  DEFAULT_REFUSAL_JUDGE_PROMPT,
  parseRefusalJudgeOutput,
  refusalAgreement,
  refusalJudgeItem,
} from './refusal-judge.js';
export type { RefusalAgreement, RefusalJudgeSetting, RefusalSource } from './refusal-judge.js';
export { chunkBudgetOf, DEFAULT_CHUNK_BUDGET, labelingChunks, reassembleChunks } from './chunks.js';
export type { ChunkBudget, StepChunk } from './chunks.js';
export { grpoPromptRows, splitByQuestion } from './mitigation/grpo-data.js';
export type { GrpoExport, GrpoFormat, OpenRlhfPromptRow, VerlPromptRow } from './mitigation/grpo-data.js';
export {
  builtinQuestionSchema,
  loadBuiltinQuestions,
  loadQuestionsFile,
  parseBuiltinQuestionsJsonl,
  parseQuestionsCsv,
  parseQuestionsJsonl,
  questionIdFromText,
} from './questions.js';
export type { Question, QuestionSet } from './questions.js';
export {
  buildRaterMessages,
  buildRaterReaskMessages,
  parseRaterOutput,
  QUESTION_PROPERTIES,
  RATER_DEFAULT_PARAMS,
  RATER_SYSTEM_PROMPT,
} from './rater.js';
export type { QuestionProperty, RaterFailureReason, RaterParseResult, RaterVerdict } from './rater.js';
export {
  createLabelerSimProfile,
  createMemorySimProfile,
  DEFAULT_FLIP_PROBABILITY,
  DEFAULT_SAMPLING_NOISE,
  DEFAULT_SEEDED_NOISE,
  seededNoiseRate,
  seededSimSymbols,
  parseGenerationRequest,
  readLabelerPrompt,
  registerMemorySimProfiles,
  SIM_STEP_CUES,
  SIM_SYMBOLS,
  simBaselineSequence,
  simLabelForStep,
} from './sim.js';
export type {
  BaselineOptions,
  LabelerSimOptions,
  MemorySimOptions,
  MemorySimProfile,
  ParsedGenerationRequest,
  SimOutputFormat,
  SimTrajectory,
} from './sim.js';
export {
  extractAnswer,
  extractNumberedSteps,
  extractParagraphSteps,
  extractSentenceSteps,
  extractSteps,
  extractTaggedSteps,
} from './steps.js';
export type { StepExtraction, StepExtractionOptions, StepMethod } from './steps.js';
export { memoryConfigSchema, PAPER_DECODING, resolveMemorySystemPrompt } from './config.js';
export type { MemoryConfig, MemoryDecoding, MemoryQuestionsConfig } from './config.js';
export {
  dryRunMemory,
  labelerCheckPasses,
  labelingItem,
  loadMemoryConfig,
  loadMemoryOntology,
  MEMORY_CURATE_EXPERIMENT,
  MEMORY_EXPERIMENT,
  MEMORY_LABELER_CHECK_EXPERIMENT,
  memoryDecodingParams,
  labelerTokenBudget,
  memoryLabelingLabels,
  planMemoryGeneration,
  preflightMemory,
  resolveMemoryStimuli,
  runLabelerCheck,
  runMemory,
  runQuestionRater,
  selectQuestions,
  selectRelabelItems,
  stepsOfGeneration,
  stimuliFingerprint,
} from './run.js';
export type {
  LabelerCheckConfig,
  LabelerCheckPass,
  LabelerCheckRunResult,
  LabelerPlanOptions,
  MemoryDryRun,
  MemoryPreflight,
  MemoryRunOptions,
  MemoryRunResult,
  MemoryStimuli,
  RaterOutcome,
  RaterRunResult,
  RelabelItem,
  ResolveStimuliOptions,
} from './run.js';
export {
  chainSlice,
  collectLabelerCheck,
  collectMemoryObservations,
  collectMemorySamples,
  labelerCheckRunIds,
  labelingChains,
  memoryReport,
  memoryRunId,
  memoryRunSetup,
  relabelItems,
  resolveLabeling,
  scoreMemoryRun,
} from './observations.js';
export type {
  LabelerCheckCollection,
  LabelerCheckPassCounts,
  MemoryCollection,
  MemoryCollectionSummary,
  MemoryObservationOptions,
  MemoryReportOptions,
  MemorySampleRecord,
  SampleOutcome,
} from './observations.js';

// dtw-reference (docs/decisions.md#d5): the authors' fastdtw/cosine/path-length DTW, for comparison only.
export {
  embeddingText,
  loadSymbolEmbeddings,
  memoryReferenceMetric,
  readEmbeddingsFile,
  referenceMetricReport,
  renderReferenceMetricMarkdown,
} from './reference-metric.js';
export type {
  LoadEmbeddingsOptions,
  ReferenceMetricConfig,
  ReferenceMetricGroup,
  ReferenceMetricReport,
  SymbolEmbeddingTable,
} from './reference-metric.js';
export { isEmbeddingsFile } from './config.js';

// Mitigation tooling (DPO data, GRPO reward server, evaluation): explicit names in its own index.
export * from './mitigation/index.js';
export {
  exportStepLabelSheet,
  parseStepLabelKey,
  parseStepLabelSheet,
  renderStepLabelAgreementMarkdown,
  sampleStepLabels,
  STEP_SHEET_INSTRUCTIONS,
  stepLabelAgreement,
} from './label-sheet.js';
export type { CategoryAgreement, HumanLabel, LabelledStepSource, StepLabelAgreement, StepLabelItem, StepLabelKey } from './label-sheet.js';

import { registerMemorySimProfiles } from './sim.js';

// The `sim:` adapter finds profiles by name; registering is cheap (data files load on first use).
registerMemorySimProfiles();
export { loadMemoryMaterials, type MemoryMaterials, type ReferenceMemoryTexts } from './materials.js';
export { buildReferenceLabelerMessages, parseReferenceLabelerOutput } from './reference-labeler.js';
export {
  BENCHMARK_CURATIONS,
  type BenchmarkCuration,
  type BenchmarkFileOptions,
  type BenchmarkLoad,
  loadBenchmarkFile,
} from './benchmark-files.js';
export { checkNoiseFloor, completeReferenceStimuli, type ConditionSource, type ConditionSourceKind, SUPPLEMENTED_TIERS } from './materials-stimuli.js';
export { registerSimMemoryTexts, type SimMemoryTexts } from './sim.js';
