// Public API of src/report/ (re-exported from the package root).
export {};
