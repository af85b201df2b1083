import { canonicalJson, sha256Hex } from '../core/canonical-json.js';
import { definedFields } from '../core/copy-defined.js';
import { InvalidArgumentError } from '../core/errors.js';
import type { ModelRequest } from '../models/types.js';
import type { CellSpec } from './types.js';

/** Field names that may carry credentials; their values are never hashed or stored. */
const SECRET_FIELD =
  /^(api[-_]?key|x[-_]api[-_]key|authorization|proxy[-_]authorization|bearer|password|secret|client[-_]secret|access[-_]?token|auth[-_]?token|refresh[-_]?token)$/i;
/** Environment variables whose values are treated as secrets. */
const SECRET_ENV = /(api[-_]?key|_key|_token|_secret|password)$/i;
export const REDACTED = '[redacted]';

/**
 * The part of a request that decides the call, in a fixed shape:
 * model ref, messages, decoding parameters, sample index. Credential-like
 * fields are replaced so a key can never leak into a hash or the store.
 */
export function canonicalRequest(request: ModelRequest): ModelRequest {
  validateRequest(request);
  const out: ModelRequest = {
    model: request.model,
    messages: request.messages.map((message) => scrubFields(message) as ModelRequest['messages'][number]),
    params: scrubFields(request.params ?? {}) as ModelRequest['params'],
    sample: request.sample,
    // Tool fields exist only on requests that offer tools: absent, they change nothing.
    ...toolMembers(request),
  };
  if (request.tools !== undefined) out.tools = scrubFields(request.tools) as ModelRequest['tools'];
  return out;
}

/** The optional members of a request (tools, draw unit), present only when set (so older keys never change). */
function toolMembers(request: Pick<ModelRequest, 'tools' | 'toolChoice' | 'unit'>): Pick<ModelRequest, 'tools' | 'toolChoice' | 'unit'> {
  return definedFields(request, ['toolChoice', 'tools', 'unit']);
}

/**
 * The model part of a cell's identity: the reference without its `@http(s)://…` base URL, so
 * restarting a local server on another port keeps every key (the URL is transport, recorded
 * with the cell, not hashed). `request.identity: 'url'` keeps the whole reference (the rule of
 * earlier versions). `replay:` references are paths and are never split.
 */
export function identityModel(request: Pick<ModelRequest, 'model' | 'identity'>): string {
  if (request.identity === 'url' || request.model.startsWith('replay:')) return request.model;
  const lower = request.model.toLowerCase();
  const at = Math.max(lower.lastIndexOf('@http://'), lower.lastIndexOf('@https://'));
  return at > 0 ? request.model.slice(0, at) : request.model;
}

/** SHA-256 (hex) of the canonical request: the cell key. Labels never enter it, nor a base URL (see `identityModel`). */
export function cellKey(spec: CellSpec | ModelRequest): string {
  return cellIdentity('request' in spec ? spec.request : spec).key;
}

/**
 * Key of the request content without the model ref (messages, params, sample, and tools
 * when offered): what `replay:` looks up, so a run can be replayed whatever model answered it.
 */
export function contentKey(request: ModelRequest): string {
  return cellIdentity(request).contentKey;
}

/** Everything the store needs to know a request by, from one serialization. */
export interface CellIdentity {
  /** `cellKey` of the request. */
  key: string;
  /** `contentKey` of the request. */
  contentKey: string;
  /** The canonical, credential-scrubbed request JSON, with the whole model reference (base URL included). */
  json: string;
  /**
   * The key under the earlier rule (whole reference hashed), when it differs: a store written
   * before identity left the base URL out holds its cells under this key (`SqlStore.registerCells` prefers it then).
   */
  legacyKey?: string;
}

/**
 * Cell key, content key and canonical JSON at once: the canonical members are
 * messages < model < params < sample, so both hashed texts share three
 * serialized parts.
 */
export function cellIdentity(request: ModelRequest): CellIdentity {
  validateRequest(request);
  const messages = scrubbedCanonicalJson(request.messages);
  const params = scrubbedCanonicalJson(request.params ?? {});
  const sample = scrubbedCanonicalJson(request.sample);
  // Canonical member order: messages < model < params < sample < toolChoice < tools < unit.
  const tail = optionalMembersJson(request);
  const withModel = (model: string) => `{"messages":${messages},"model":${JSON.stringify(model)},"params":${params},"sample":${sample}${tail}}`;
  const json = withModel(request.model);
  const model = identityModel(request);
  const identity: CellIdentity = {
    key: model === request.model ? sha256Hex(json) : sha256Hex(withModel(model)),
    contentKey: sha256Hex(`{"messages":${messages},"params":${params},"sample":${sample}${tail}}`),
    json,
  };
  if (model !== request.model) identity.legacyKey = sha256Hex(json);
  return identity;
}

/**
 * The serialized optional members (`,"toolChoice":…,"tools":…,"unit":…`, each only when set),
 * in canonical order: every hasher and the blob encoder append this after `sample`.
 */
export function optionalMembersJson(request: Pick<ModelRequest, 'tools' | 'toolChoice' | 'unit'>): string {
  let tail = '';
  for (const [name, value] of Object.entries(toolMembers(request))) tail += `,${JSON.stringify(name)}:${scrubbedCanonicalJson(value)}`;
  return tail;
}

/**
 * `canonicalJson(scrubFields(value))` in one pass, without the two deep copies:
 * keys are hashed for every cell of every plan, so this is the runner's hot path.
 * Plain JSON data only; anything else takes the slow, exact route.
 */
export function scrubbedCanonicalJson(value: unknown): string {
  if (value === null) return 'null';
  switch (typeof value) {
    case 'string':
      return JSON.stringify(value);
    case 'boolean':
      return value ? 'true' : 'false';
    case 'number':
      if (!Number.isFinite(value)) throw new TypeError(`canonicalJson: non-finite number ${value} cannot be serialized`);
      return JSON.stringify(value);
    case 'object': {
      if (Array.isArray(value)) {
        let out = '[';
        for (let index = 0; index < value.length; index += 1) {
          if (index > 0) out += ',';
          const item: unknown = value[index];
          out += item === undefined || typeof item === 'function' || typeof item === 'symbol' ? 'null' : scrubbedCanonicalJson(item);
        }
        return `${out}]`;
      }
      const proto = Object.getPrototypeOf(value);
      if ((proto !== Object.prototype && proto !== null) || typeof (value as { toJSON?: unknown }).toJSON === 'function') {
        return canonicalJson(scrubFields(value));
      }
      const record = value as Record<string, unknown>;
      let out = '{';
      let first = true;
      for (const name of canonicalKeyOrder(Object.keys(record))) {
        const member = record[name];
        if (member === undefined || typeof member === 'function' || typeof member === 'symbol') continue;
        if (!first) out += ',';
        first = false;
        out += `${JSON.stringify(name)}:`;
        out += SECRET_FIELD.test(name) && member !== null ? JSON.stringify(REDACTED) : scrubbedCanonicalJson(member);
      }
      return `${out}}`;
    }
    default:
      return canonicalJson(scrubFields(value));
  }
}

export function validateRequest(request: ModelRequest): void {
  if (request === null || typeof request !== 'object') {
    throw new InvalidArgumentError('request', 'must be an object');
  }
  if (typeof request.model !== 'string' || request.model.trim() === '') {
    throw new InvalidArgumentError('request.model', 'must be a non-empty model reference');
  }
  if (!Array.isArray(request.messages) || request.messages.length === 0) {
    throw new InvalidArgumentError('request.messages', 'must be a non-empty array of messages');
  }
  for (const [index, message] of request.messages.entries()) {
    if (message === null || typeof message !== 'object' || typeof message.content !== 'string') {
      throw new InvalidArgumentError(`request.messages[${index}]`, 'must have a string content');
    }
    if (message.role !== 'system' && message.role !== 'user' && message.role !== 'assistant') {
      throw new InvalidArgumentError(`request.messages[${index}].role`, `must be system, user or assistant, got ${String(message.role)}`);
    }
  }
  if (!Number.isInteger(request.sample) || request.sample < 0) {
    throw new InvalidArgumentError('request.sample', `must be an integer ≥ 0, got ${String(request.sample)}`);
  }
  if (request.tools !== undefined) {
    if (!Array.isArray(request.tools)) throw new InvalidArgumentError('request.tools', 'must be an array of tool definitions');
    for (const [index, tool] of request.tools.entries()) {
      if (tool === null || typeof tool !== 'object' || typeof tool.name !== 'string' || tool.name === '') {
        throw new InvalidArgumentError(`request.tools[${index}].name`, 'must be a non-empty string');
      }
      if (tool.inputSchema === null || typeof tool.inputSchema !== 'object' || Array.isArray(tool.inputSchema)) {
        throw new InvalidArgumentError(`request.tools[${index}].inputSchema`, 'must be a JSON Schema object');
      }
    }
  }
  if (request.unit !== undefined && (typeof request.unit !== 'string' || request.unit === '')) {
    throw new InvalidArgumentError('request.unit', `must be a non-empty string when set, got ${String(request.unit)}`);
  }
  if (request.toolChoice !== undefined && !['auto', 'required', 'none'].includes(request.toolChoice)) {
    throw new InvalidArgumentError('request.toolChoice', `must be auto, required or none, got ${String(request.toolChoice)}`);
  }
}

const ARRAY_INDEX = /^(?:0|[1-9]\d{0,9})$/;

/**
 * The member order `canonicalJson` produces: it inserts sorted keys into a new
 * object, and JS objects list array-index keys first, in numeric order.
 */
function canonicalKeyOrder(names: string[]): string[] {
  const sorted = names.sort();
  const isIndex = (name: string) => ARRAY_INDEX.test(name) && Number(name) < 4294967295;
  if (!sorted.some(isIndex)) return sorted;
  const indices = sorted.filter(isIndex).sort((a, b) => Number(a) - Number(b));
  return [...indices, ...sorted.filter((name) => !isIndex(name))];
}

/** Deep copy with credential-named fields replaced by `[redacted]`. */
export function scrubFields(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(scrubFields);
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
      const scrubbed = SECRET_FIELD.test(name) && member !== undefined && member !== null ? REDACTED : scrubFields(member);
      // An own "__proto__" member (JSON.parse makes them) stays a member: assigning it would set the prototype.
      if (name === '__proto__') Object.defineProperty(out, name, { value: scrubbed, enumerable: true, writable: true, configurable: true });
      else out[name] = scrubbed;
    }
    return out;
  }
  return value;
}

/** Values of environment variables that look like credentials (long enough to be real). */
export function secretValuesFromEnv(env: NodeJS.ProcessEnv = process.env): string[] {
  const values = new Set<string>();
  for (const [name, value] of Object.entries(env)) {
    if (value !== undefined && value.length >= 8 && SECRET_ENV.test(name)) values.add(value);
  }
  // Longest first so a key that contains another is replaced whole.
  return [...values].sort((a, b) => b.length - a.length);
}

/** Credential fields replaced, and any occurrence of a secret value inside a string replaced. */
export function scrubSecrets(value: unknown, secrets: readonly string[]): unknown {
  const fieldsScrubbed = scrubFields(value);
  if (secrets.length === 0) return fieldsScrubbed;
  return replaceSecretValues(fieldsScrubbed, secrets);
}

/** Any occurrence of a secret value inside a string replaced (a copy; fields are left as they are). */
export function replaceSecretValues(value: unknown, secrets: readonly string[]): unknown {
  if (typeof value === 'string') {
    let text = value;
    for (const secret of secrets) if (text.includes(secret)) text = text.split(secret).join(REDACTED);
    return text;
  }
  if (Array.isArray(value)) return value.map((item) => replaceSecretValues(item, secrets));
  if (value !== null && typeof value === 'object') {
    const out: Record<string, unknown> = {};
    for (const [name, member] of Object.entries(value as Record<string, unknown>)) {
      out[name] = replaceSecretValues(member, secrets);
    }
    return out;
  }
  return value;
}
