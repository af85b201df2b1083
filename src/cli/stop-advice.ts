/** What a run that stopped early tells the user: why, and what to do next. */
export function stopAdvice(reason: 'interrupted' | 'budget' | 'fatal' | null, budget?: { maxCostUsd: number; suggestedUsd: string }): string {
  if (reason === 'budget') {
    const limit = budget ? `the budget --max-cost $${budget.maxCostUsd}` : 'the --max-cost budget';
    const raise = budget ? `raise --max-cost to $${budget.suggestedUsd} (the whole grid's estimate)` : 'raise --max-cost';
    return `stopped: ${limit} would be exceeded by the next cell. To finish, ${raise} and run the same command again: finished cells are stored and are not paid for again.`;
  }
  if (reason === 'fatal') return 'stopped: the same error kept happening (see above); fix it and run the same command again to resume.';
  return 'interrupted: finished cells are stored; run the same command again to resume.';
}
