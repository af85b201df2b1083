import type { GateCheck, GateResult } from './evaluate.js';
// Markdown table cells: escapes for pipes, line breaks and HTML-significant characters.
import { markdownText as cell } from '../report/markdown-text.js';
import { registeredGates } from './registered.js';

/** The gate's result as JUnit XML (for CI test tabs) and as Markdown (GitHub Actions step summary). */

const XML_ESCAPES: Readonly<Record<string, string>> = { '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&apos;' };

function xml(text: string): string {
  // XML 1.0 forbids most control characters even when escaped.
  return text.replace(/[&<>"']/gu, (c) => XML_ESCAPES[c] as string).replace(/[\u0000-\u0008\u000b\u000c\u000e-\u001f]/gu, '');
}

export function renderJUnit(result: GateResult): string {
  const byRun = new Map<string, GateCheck[]>();
  for (const c of result.checks) byRun.set(c.run, [...(byRun.get(c.run) ?? []), c]);
  const lines = [
    '<?xml version="1.0" encoding="UTF-8"?>',
    `<testsuites name="echolens gate" tests="${result.checks.length}" failures="${result.counts.fail}" skipped="${result.counts.skipped}" errors="0">`,
  ];
  for (const [run, checks] of byRun) {
    const failures = checks.filter((c) => c.status === 'fail').length;
    const skipped = checks.filter((c) => c.status === 'skipped').length;
    lines.push(`  <testsuite name="${xml(run)}" tests="${checks.length}" failures="${failures}" skipped="${skipped}" errors="0">`);
    if (result.simulated) {
      lines.push('    <properties><property name="simulated" value="true"/></properties>');
    }
    for (const c of checks) {
      const open = `    <testcase classname="${xml(`echolens.${c.audit}.${c.subject}`)}" name="${xml(c.name)}"`;
      if (c.status === 'pass') lines.push(`${open}/>`);
      else if (c.status === 'skipped') lines.push(`${open}><skipped message="${xml(c.message)}"/></testcase>`);
      else lines.push(`${open}><failure message="${xml(c.message)}" type="${xml(c.name)}">${xml(c.message)}</failure></testcase>`);
    }
    lines.push('  </testsuite>');
  }
  lines.push('</testsuites>');
  return `${lines.join('\n')}\n`;
}

export function renderGateMarkdown(result: GateResult): string {
  const icon = { pass: '✅', fail: '❌', skipped: '⚠️' } as const;
  const head = result.verdict === 'pass' ? '✅ pass' : result.verdict === 'fail' ? '❌ fail' : '⚠️ not computable';
  const lines = [`## echolens gate: ${head}`, ''];
  if (result.simulated) {
    lines.push('> **Simulated models (`sim:`)**: these results come from deterministic simulations with planted effects and measure no real model.', '');
  }
  lines.push(
    `${result.counts.fail} failed, ${result.counts.pass} passed, ${result.counts.skipped} skipped.`,
    '',
    '| | run | audit | subject | check | detail |',
    '|---|---|---|---|---|---|',
    ...result.checks.map((c) => `| ${icon[c.status]} | ${cell(c.run)} | ${c.audit} | ${cell(c.subject)} | ${cell(c.name)} | ${cell(c.message)} |`),
    '',
    `Thresholds: ${thresholdText(result)}.`,
  );
  return `${lines.join('\n')}\n`;
}

export function thresholdText(result: GateResult): string {
  const t = result.thresholds;
  return [...registeredGates().flatMap((gate) => gate.describe(t)), `max failed cells ${(100 * t.maxFailedCells).toFixed(1)}%`].join(', ');
}

/** Plain-text lines for the terminal: the failures and skips, then the verdict. */
export function renderGateText(result: GateResult): string {
  const lines = result.checks
    .filter((c) => c.status !== 'pass')
    .map((c) => `${c.status === 'fail' ? 'FAIL' : 'SKIP'} ${c.run} ${c.audit} ${c.subject} ${c.name}: ${c.message}`);
  lines.push(
    `gate: ${result.verdict.toUpperCase()} (${result.counts.fail} failed, ${result.counts.pass} passed, ${result.counts.skipped} skipped)${result.simulated ? ' — SIMULATED models: measures nothing real' : ''}`,
  );
  return `${lines.join('\n')}\n`;
}
