import { CLI_FROM_SOURCE, spawnCaptured } from '../../src/cli/testing/spawn-cli.js';

/**
 * The CLI as a real process (from source), with its peak resident memory (MB) printed by a hook on
 * exit. A hang fails as the calling test's timeout.
 */
export async function spawnMeasured(args: readonly string[]): Promise<{ code: number | null; stdout: string; stderr: string; maxRssMb: number }> {
  const hook = 'data:text/javascript,process.on("exit",()=>process.stderr.write("\\nmaxrss-kb="+process.resourceUsage().maxRSS+"\\n"))';
  const out = await spawnCaptured(process.execPath, ['--import', hook, ...CLI_FROM_SOURCE, ...args]);
  const rss = /maxrss-kb=(\d+)/u.exec(out.stderr);
  return { ...out, maxRssMb: rss ? Number(rss[1]) / 1024 : Number.NaN };
}
