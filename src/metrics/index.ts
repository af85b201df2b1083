// Public API of src/metrics/ (re-exported from the package root).
export {};
