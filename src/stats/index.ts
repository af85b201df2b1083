// Public API of src/stats/ (re-exported from the package root).
export {};
