import { parse as parseYaml } from 'yaml';

/**
 * Strict checkers for the hardened output contracts C1_csv, C2_yaml, C5_echo
 * and C6_json (docs/decisions.md#d19): the whole output must parse, in exact order.
 * A fenced but otherwise correct output fails with reason `fenced` and
 * `fencedCorrect: true`, the failure mode the paper reports for drifted arms.
 */

export type ContractFormat = 'csv' | 'yaml' | 'lines' | 'json';

export interface ContractSpec {
  id: string;
  format: ContractFormat;
  prompt: string;
  expected: string;
}

export type ContractFailure =
  | 'empty'
  | 'fenced'
  | 'extra-text'
  | 'parse'
  | 'header'
  | 'row-count'
  | 'count'
  | 'keys'
  | 'order'
  | 'quoted'
  | 'case'
  | 'value'
  | 'format';

export interface ContractResult {
  pass: boolean;
  reason: 'ok' | ContractFailure;
  /** For `fenced`: whether the fenced content itself would have passed. */
  fencedCorrect?: boolean;
}

const FENCE = /^```[^\n]*\n([\s\S]*?)\n?```$/u;

/** Normalises line endings and trailing spaces; everything else must match exactly. */
function normaliseLines(text: string): string {
  return text
    .replace(/\r\n?/gu, '\n')
    .split('\n')
    .map((line) => line.replace(/[ \t]+$/u, ''))
    .join('\n')
    .trim();
}

export function checkContract(contract: ContractSpec, output: string): ContractResult {
  const text = normaliseLines(output);
  if (text === '') return { pass: false, reason: 'empty' };
  const fenced = FENCE.exec(text);
  if (fenced) {
    const inner = checkUnfenced(contract, normaliseLines(fenced[1] ?? ''));
    return { pass: false, reason: 'fenced', fencedCorrect: inner.pass };
  }
  if (text.includes('```')) return { pass: false, reason: 'extra-text', fencedCorrect: false };
  return checkUnfenced(contract, text);
}

function checkUnfenced(contract: ContractSpec, text: string): ContractResult {
  const expected = normaliseLines(contract.expected);
  if (contract.format === 'json') return checkJson(expected, text);
  if (text === expected) return { pass: true, reason: 'ok' };
  if (text.includes(expected)) return { pass: false, reason: 'extra-text' };
  switch (contract.format) {
    case 'csv':
      return { pass: false, reason: diagnoseCsv(expected, text) };
    case 'yaml':
      return { pass: false, reason: diagnoseYaml(expected, text) };
    case 'lines':
      return { pass: false, reason: diagnoseLines(expected, text) };
  }
}

function sameMultiset(a: readonly string[], b: readonly string[]): boolean {
  if (a.length !== b.length) return false;
  const sortedA = [...a].sort();
  const sortedB = [...b].sort();
  return sortedA.every((item, index) => item === sortedB[index]);
}

function diagnoseCsv(expected: string, text: string): ContractFailure {
  const want = expected.split('\n');
  const got = text.split('\n');
  if (got.some((line) => line.includes('"'))) return 'quoted';
  if (got[0] !== want[0]) return 'header';
  if (got.length !== want.length) return 'row-count';
  if (sameMultiset(got.slice(1), want.slice(1))) return 'order';
  return 'value';
}

function diagnoseYaml(expected: string, text: string): ContractFailure {
  let parsed: unknown;
  try {
    parsed = parseYaml(text);
  } catch {
    return 'parse';
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return 'parse';
  const wantObject = parseYaml(expected) as Record<string, unknown>;
  const wantKeys = Object.keys(wantObject);
  const gotKeys = Object.keys(parsed as Record<string, unknown>);
  if (!sameMultiset(wantKeys, gotKeys)) return 'keys';
  if (wantKeys.some((key, index) => gotKeys[index] !== key)) return 'order';
  if (/:\s*["']/u.test(text)) return 'quoted';
  const values = parsed as Record<string, unknown>;
  if (wantKeys.some((key) => String(values[key]) !== String(wantObject[key]))) return 'value';
  return 'format';
}

function diagnoseLines(expected: string, text: string): ContractFailure {
  const want = expected.split('\n');
  const got = text.split('\n');
  if (got.length !== want.length) return 'count';
  if (sameMultiset(got, want)) return 'order';
  if (
    sameMultiset(
      got.map((line) => line.toUpperCase()),
      want.map((line) => line.toUpperCase()),
    )
  ) {
    return got.every((line, index) => line.toUpperCase() === want[index]?.toUpperCase()) ? 'case' : 'order';
  }
  return 'value';
}

function checkJson(expected: string, text: string): ContractResult {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return { pass: false, reason: /[{][\s\S]*[}]/u.test(text) ? 'extra-text' : 'parse' };
  }
  if (parsed === null || typeof parsed !== 'object' || Array.isArray(parsed)) return { pass: false, reason: 'parse' };
  const want = JSON.parse(expected) as Record<string, unknown>;
  const got = parsed as Record<string, unknown>;
  const wantKeys = Object.keys(want);
  const gotKeys = Object.keys(got);
  if (!sameMultiset(wantKeys, gotKeys)) return { pass: false, reason: 'keys' };
  if (wantKeys.some((key, index) => gotKeys[index] !== key)) return { pass: false, reason: 'order' };
  if (wantKeys.some((key) => JSON.stringify(got[key]) !== JSON.stringify(want[key]))) {
    return { pass: false, reason: 'value' };
  }
  return { pass: true, reason: 'ok' };
}
