// Moved to models/estimate.ts (audits print their dry runs); this name stays for existing imports.
export { estimateLines } from '../models/estimate.js';
