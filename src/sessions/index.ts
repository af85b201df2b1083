// Public API of src/sessions/ (re-exported from the package root).
export {};
