// Public API of src/memory-drift/ (re-exported from the package root).
export {};
