/**
 * A test hook at the stage boundaries of `runAudit`: with
 * `ECHOLENS_TEST_KILL_AFTER_STAGE=<stage>` in the environment the process SIGKILLs itself
 * right after that stage's progress is recorded, before the next stage registers a cell.
 * The reliability tests use it to kill a real `echolens … run` at an exact boundary
 * (a timer cannot hit it deterministically). Nothing sets it outside tests.
 */
export function afterStage(stage: string, env: NodeJS.ProcessEnv = process.env): void {
  if (env.ECHOLENS_TEST_KILL_AFTER_STAGE === stage) process.kill(process.pid, 'SIGKILL');
}
