// Public API of src/store/ (re-exported from the package root).
export {};
