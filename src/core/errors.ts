/**
 * Typed errors. Anything a user can cause (bad input, bad config, missing key)
 * is an EcholensError: the CLI prints its message without a stack trace.
 * Anything else is a bug and is printed with its stack.
 */
export class EcholensError extends Error {
  readonly code: string;
  readonly hint: string | undefined;

  constructor(code: string, message: string, options?: { hint?: string; cause?: unknown }) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.name = new.target.name;
    this.code = code;
    this.hint = options?.hint;
  }
}

/** A function argument is unusable (wrong type, out of range, mismatched lengths). */
export class InvalidArgumentError extends EcholensError {
  readonly argument: string;

  constructor(argument: string, message: string) {
    super('invalid_argument', `${argument}: ${message}`);
    this.argument = argument;
  }
}

/** A file the user gave us is malformed. Names the file, line (1-based) and field when known. */
export class InputError extends EcholensError {
  readonly file: string | undefined;
  readonly line: number | undefined;
  readonly field: string | undefined;

  constructor(message: string, where: { file?: string; line?: number; field?: string } = {}, options?: { hint?: string; cause?: unknown }) {
    super('input_error', `${formatLocation(where)}${message}`, options);
    this.file = where.file;
    this.line = where.line;
    this.field = where.field;
  }
}

/** A configuration value is invalid or missing. */
export class ConfigError extends InputError {}

/** A statistic cannot be computed from the data given (empty group, zero variance, …). */
export class StatisticsError extends EcholensError {
  constructor(message: string) {
    super('statistics_error', message);
  }
}

export function formatLocation(where: { file?: string; line?: number; field?: string }): string {
  const parts: string[] = [];
  if (where.file !== undefined) parts.push(where.file);
  if (where.line !== undefined) parts.push(String(where.line));
  const place = parts.join(':');
  if (where.field !== undefined) return place ? `${place}: ${where.field}: ` : `${where.field}: `;
  return place ? `${place}: ` : '';
}

export function isEcholensError(error: unknown): error is EcholensError {
  return error instanceof EcholensError;
}
