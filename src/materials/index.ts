// Public API of src/materials/ (the authors' materials read from a local clone), re-exported from the package root.
export { CONTEXTECHO_FILES, type ContextEchoMaterials, loadContextEchoMaterials, type ReferencePattern } from './contextecho.js';
export { DRIFTLENS_FILES, type DriftLensMaterials, loadDriftLensMaterials, pythonRepr, referenceOntologyText } from './driftlens.js';
export { ECHOLENS_MATERIALS, isBuiltinMaterials, type MaterialFile, type MaterialsRecord } from './files.js';
export { materialsMarkdown, type RunMaterials, runMaterials } from './report.js';
