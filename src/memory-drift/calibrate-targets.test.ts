import { describe, expect, it } from 'vitest';
import { prepareDesign, targetsNote } from './calibrate.js';
import { memoryConfigSchema } from './config.js';
import { resolveMemoryStimuli } from './run.js';

const two = memoryConfigSchema.parse({ targets: ['sim:a', 'sim:b'], labeler: 'sim:labeler', questions: { limit: 5 } });
const stimuli = await resolveMemoryStimuli(two);

describe('memory calibrate with several targets', () => {
  it('says that one simulated target stands for every target, and what several add', () => {
    expect(targetsNote(1, 0.05)).toMatch(/one target/);
    expect(targetsNote(3, 0.05)).toMatch(/simulated once for all 3 targets.*same seeds.*up to 3 × the per-target rate \(≤ 15 %/);
    // The plan of the second target repeats the first's seeds: the simulation would be identical.
    const stimuliOf = (cells: ReturnType<typeof prepareDesign>['cells']) => cells.map((c) => c.request.params.seed);
    expect(stimuliOf(prepareDesign({ ...two, targets: ['sim:b'] }, stimuli).cells)).toEqual(stimuliOf(prepareDesign(two, stimuli).cells));
  });
});
