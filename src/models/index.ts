// Public API of src/models/ (re-exported from the package root).
export {};
