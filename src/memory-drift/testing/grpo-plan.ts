import { memoryConfigSchema } from '../config.js';
import { planMemoryGeneration, resolveMemoryStimuli } from '../run.js';

/** A small planned memory run (sim:memory, 3 questions, filler and gender, k = 2): its stimuli, cells and question ids. */
export async function smallGrpoPlan() {
  const config = memoryConfigSchema.parse({ targets: ['sim:memory'], labeler: 'sim:labeler', questions: { limit: 3 }, conditions: ['filler', 'gender'], k: 2 });
  const stimuli = await resolveMemoryStimuli(config);
  const cells = planMemoryGeneration(config, stimuli);
  const ids = stimuli.questions.questions.map((q) => q.id);
  return { config, stimuli, cells, ids };
}
