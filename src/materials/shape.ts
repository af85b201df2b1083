import { InputError } from '../core/errors.js';
import type { PyValue, StringPart } from './python-literal.js';

/**
 * Shape checks for values read from a reference repository: each names the
 * file, the line and what was expected, so a clone of another version fails
 * with a message that says where it differs.
 */

export class Shape {
  constructor(readonly file: string) {}

  fail(value: PyValue | undefined, message: string): never {
    throw new InputError(
      message,
      { file: this.file, ...(value ? { line: value.line } : {}) },
      {
        hint: 'the materials loader expects the layout of the published reference repository; is this clone another version?',
      },
    );
  }

  str(value: PyValue | undefined, what: string, options: { nonEmpty?: boolean; plain?: boolean } = {}): string {
    if (value?.kind !== 'str') return this.fail(value, `${what}: expected a string, found ${value?.kind ?? 'nothing'}`);
    if ((options.plain ?? true) && value.parts.some((p) => 'field' in p)) this.fail(value, `${what}: expected a plain string, found an f-string`);
    if ((options.nonEmpty ?? true) && value.value.trim() === '') this.fail(value, `${what}: the string is empty`);
    return value.value;
  }

  template(value: PyValue | undefined, what: string, fields: readonly string[]): StringPart[] {
    if (value?.kind !== 'str') return this.fail(value, `${what}: expected a string, found ${value?.kind ?? 'nothing'}`);
    const found = value.parts.flatMap((p) => ('field' in p ? [p.field] : []));
    const unknown = found.filter((f) => !fields.includes(f));
    const missing = fields.filter((f) => !found.includes(f));
    if (unknown.length > 0 || missing.length > 0) {
      this.fail(value, `${what}: expected the fields {${fields.join('}, {')}}, found {${found.join('}, {')}}`);
    }
    return value.parts;
  }

  seq(value: PyValue | undefined, what: string, kinds: ReadonlyArray<'list' | 'tuple'> = ['list']): PyValue[] {
    if (value === undefined || !(kinds as readonly string[]).includes(value.kind) || !('items' in value)) {
      return this.fail(value, `${what}: expected a ${kinds.join(' or ')}, found ${value?.kind ?? 'nothing'}`);
    }
    return value.items;
  }

  strings(value: PyValue | undefined, what: string, count?: { min?: number; exactly?: number }): string[] {
    const items = this.seq(value, what);
    if (count?.exactly !== undefined && items.length !== count.exactly) this.fail(value, `${what}: expected ${count.exactly} items, found ${items.length}`);
    if (count?.min !== undefined && items.length < count.min) this.fail(value, `${what}: expected at least ${count.min} items, found ${items.length}`);
    return items.map((item, i) => this.str(item, `${what}[${i}]`));
  }

  dict(value: PyValue | undefined, what: string): Array<[string, PyValue]> {
    if (value?.kind !== 'dict') return this.fail(value, `${what}: expected a dict, found ${value?.kind ?? 'nothing'}`);
    return value.entries.map(([key, v], i) => [this.str(key, `${what} key ${i}`), v]);
  }

  call(value: PyValue | undefined, what: string, callee: string): Extract<PyValue, { kind: 'call' }> {
    if (value?.kind !== 'call' || value.callee !== callee) {
      return this.fail(value, `${what}: expected a call of ${callee}(…), found ${value?.kind === 'call' ? `${value.callee}(…)` : (value?.kind ?? 'nothing')}`);
    }
    return value;
  }
}
