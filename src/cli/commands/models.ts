import type { Command } from 'commander';
import { loadPriceTable } from '../../models/prices.js';
import { PROVIDERS } from '../../models/providers.js';
import '../../models/sim-echo.js';
import { listSimProfiles } from '../../models/sim-registry.js';

interface ModelsOptions {
  json?: boolean;
  prices?: string | boolean;
}

export function registerModels(program: Command): void {
  program
    .command('models')
    .description('list model providers (base URLs, key variables), simulated profiles and known prices')
    .option('--prices [file]', 'also list the price table (built-in, or overridden by a JSON/YAML file)')
    .option('--json', 'print JSON')
    .addHelpText(
      'after',
      [
        '',
        'A model is named provider:model[@baseURL], e.g. openai:gpt-4.1-mini, anthropic:claude-sonnet-4-5,',
        'ollama:qwen3:4b, vllm:Qwen/Qwen3-4B@http://127.0.0.1:8000/v1, local:hf:Qwen/Qwen3-0.6B-GGUF:Q8_0, sim:echo.',
        'Only whether a key variable is set is shown, never its value.',
      ].join('\n'),
    )
    .action((options: ModelsOptions) => {
      const env = process.env;
      const providers = PROVIDERS.map((p) => ({
        name: p.name,
        description: p.description,
        baseURL: (p.baseURLEnv !== undefined ? env[p.baseURLEnv] : undefined) || p.defaultBaseURL || null,
        baseURLRequired: p.baseURLRequired === true,
        keyVariable: p.keyEnv ?? null,
        keyRequired: p.keyRequired,
        keySet: p.keyEnv === undefined ? null : (env[p.keyEnv] ?? '').trim() !== '',
        otherVariables: (p.otherEnv ?? []).map((name) => ({ name, set: (env[name] ?? '').trim() !== '' })),
        example: p.example,
      }));
      const sims = listSimProfiles().map((s) => ({ name: `sim:${s.name}`, description: s.description }));
      const prices = options.prices === undefined ? undefined : loadPriceTable(typeof options.prices === 'string' ? { file: options.prices } : {});
      if (options.json) {
        process.stdout.write(`${JSON.stringify({ providers, simProfiles: sims, ...(prices === undefined ? {} : { prices }) }, null, 2)}\n`);
        return;
      }
      const lines: string[] = ['Providers:'];
      const width = Math.max(...providers.map((p) => p.name.length)) + 1;
      for (const p of providers) {
        const key = p.keyVariable === null ? 'no key' : `${p.keyVariable} ${p.keyRequired ? '(required' : '(optional'}, ${p.keySet ? 'set)' : 'not set)'}`;
        const base = p.baseURL ?? (p.baseURLRequired ? '@baseURL required' : '-');
        lines.push(`  ${`${p.name}:`.padEnd(width + 1)} ${p.description}`);
        lines.push(`  ${''.padEnd(width + 1)} base ${base}; ${key}; e.g. ${p.example}`);
        if (p.otherVariables.length > 0) {
          const others = p.otherVariables.map((v) => `${v.name} (${v.set ? 'set' : 'not set'})`).join(', ');
          lines.push(`  ${''.padEnd(width + 1)} also reads ${others}`);
        }
      }
      lines.push('', 'Simulated models (deterministic simulations; they measure nothing):');
      const simWidth = Math.max(0, ...sims.map((s) => s.name.length));
      for (const s of sims) lines.push(`  ${s.name.padEnd(simWidth)}  ${s.description}`);
      if (prices !== undefined) {
        lines.push('', `Prices, USD per 1M tokens (checked ${prices.checked ?? 'unknown'}):`);
        lines.push('  model                                    input   output  cached  cache-write');
        for (const m of prices.models) {
          const cell = (v: number | undefined) => (v === undefined ? '-' : String(v)).padStart(7);
          lines.push(`  ${`${m.provider}:${m.model}`.padEnd(40)} ${cell(m.input)} ${cell(m.output)} ${cell(m.cachedInput)} ${cell(m.cacheWrite)}`);
        }
        lines.push(`  free (no per-token charge): ${prices.freeProviders.join(', ')}`);
        lines.push('  any other model: cost unknown (reported as unknown, never as $0)');
      }
      process.stdout.write(`${lines.join('\n')}\n`);
    });
}
