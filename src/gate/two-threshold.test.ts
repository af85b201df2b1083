import { describe, expect, it } from 'vitest';
import { continuationGate } from '../continuation/gate.js';
import { memoryGate } from '../memory-drift/gate.js';
import { personaGate } from '../persona-drift/gate.js';
import type { GateThresholds } from './config.js';

const thresholds = (t: Record<string, unknown>) => ({ maxFailedCells: 0.05, ...t }) as GateThresholds;

describe('the built-in audits on twoThresholdGate', () => {
  it('default to failing a significant effect with no size limit; flags list the limit first', () => {
    expect(personaGate.defaults).toEqual({ significantDrift: true, maxDrift: null });
    expect(memoryGate.defaults).toEqual({ significantElevation: true, maxElevation: null });
    expect(continuationGate.defaults).toEqual({ significantActionChange: true, maxActionChange: null });
    expect(personaGate.flags.map((f) => f.flags)).toEqual(['--max-drift <delta>', '--no-significant-drift']);
    expect(memoryGate.flags.map((f) => f.key)).toEqual(['maxElevation', 'significantElevation']);
    expect(continuationGate.failsByDefault).toBe('a significant action change');
  });

  it('describe the thresholds in words, each limit in its own unit', () => {
    expect(personaGate.describe(thresholds({ significantDrift: true, maxDrift: null }))).toEqual(['significant drift fails', 'max drift none']);
    expect(personaGate.describe(thresholds({ significantDrift: false, maxDrift: 0.3 }))).toEqual(['significant drift ignored', 'max drift 0.3']);
    expect(memoryGate.describe(thresholds({ significantElevation: true, maxElevation: 0.25 }))).toEqual(['significant elevation fails', 'max elevation 25%']);
    expect(continuationGate.describe(thresholds({ significantActionChange: false, maxActionChange: 0.2 }))).toEqual([
      'significant action change ignored',
      'max action change 0.2',
    ]);
  });
});
