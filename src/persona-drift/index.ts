// Public API of src/persona-drift/ (re-exported from the package root).
export {};
