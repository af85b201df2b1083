import type { PersonaObservation } from '../analysis.js';

/** A done probe observation of sim:a (session s1, position P00, real arm, item C01, judge score 3), with `partial` over it. */
export function personaObservation(partial: Partial<PersonaObservation>): PersonaObservation {
  return {
    target: 'sim:a',
    session: 's1',
    position: 'P00',
    positionValue: 0,
    arm: 'real',
    mitigation: 'none',
    distance: 'd0',
    surface: 'probe',
    item: 'C01',
    category: 'coding_self',
    paraphrase: 0,
    sample: 0,
    status: 'done',
    text: 'As an AI assistant, I have no preferences.',
    scores: { 'sim:judge': 3 },
    ...partial,
  };
}
