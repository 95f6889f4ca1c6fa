import type { ValidationIssue } from './errors.js';

// Small guards for walking untrusted JSON while collecting issues with their paths.

/** A JSON object as read from untrusted input: any keys, values not yet checked. */
export type JsonRecord = Readonly<Record<string, unknown>>;

/** Whether `value` is a plain JSON object (not null, not an array), for walking untrusted JSON. */
export function isRecord(value: unknown): value is JsonRecord {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * `record[key]` when `record` has it as its own property, else undefined: an optional field left
 * out is never found on a polluted `Object.prototype` (`Object.prototype.stages = …` must not add
 * a dispatch to every spec without stages).
 */
export function ownField<T extends object, K extends keyof T & string>(
  record: T,
  key: K,
): T[K] | undefined {
  return Object.hasOwn(record, key) ? record[key] : undefined;
}

export class IssueCollector {
  readonly issues: ValidationIssue[] = [];

  add(path: string, message: string): void {
    this.issues.push({ path, message });
  }

  /**
   * Reports keys of `value` outside `allowed`; returns the record's own fields (a copy without a
   * prototype, so a field it lacks reads undefined whatever Object.prototype holds), or undefined
   * when it is not a record.
   */
  record(value: unknown, path: string, allowed: readonly string[]): JsonRecord | undefined {
    if (!isRecord(value)) {
      this.add(path, `must be an object, got ${describeJson(value)}`);
      return undefined;
    }
    const own: Record<string, unknown> = Object.create(null) as Record<string, unknown>;
    for (const key of Object.keys(value)) {
      if (!allowed.includes(key))
        this.add(joinPath(path, key), `unknown field (allowed: ${allowed.join(', ')})`);
      own[key] = value[key];
    }
    return own;
  }

  array(value: unknown, path: string): readonly unknown[] | undefined {
    if (!Array.isArray(value)) {
      this.add(path, `must be an array, got ${describeJson(value)}`);
      return undefined;
    }
    return value;
  }

  integer(value: unknown, path: string, min: number, max: number): number | undefined {
    if (typeof value !== 'number' || !Number.isInteger(value) || value < min || value > max) {
      this.add(path, `must be an integer in [${min}, ${max}], got ${describeJson(value)}`);
      return undefined;
    }
    return value;
  }

  oneOf<T extends string>(value: unknown, path: string, allowed: readonly T[]): T | undefined {
    if (typeof value === 'string' && (allowed as readonly string[]).includes(value))
      return value as T;
    this.add(path, `must be one of ${allowed.join(', ')}, got ${describeJson(value)}`);
    return undefined;
  }
}

export function joinPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  // A key from untrusted JSON may hold newlines or escape sequences: quote it, ASCII only.
  if (!/^[A-Za-z_$][A-Za-z0-9_$]*$/.test(key)) {
    const quoted = JSON.stringify(key).replace(
      /[^\x20-\x7e]/g,
      (char) => `\\u${char.charCodeAt(0).toString(16).padStart(4, '0')}`,
    );
    return `${path}[${quoted}]`;
  }
  return path === '' ? key : `${path}.${key}`;
}

/** A short, single-line description of a JSON value for error messages. */
export function describeJson(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (Array.isArray(value)) return 'an array';
  if (value === null) return 'null';
  if (typeof value === 'object') return 'an object';
  // JSON.stringify turns Infinity (JSON's 1e400) and NaN into "null".
  if (typeof value === 'number' && !Number.isFinite(value))
    return Number.isNaN(value) ? 'NaN' : `a number too large for a double (${value})`;
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 40 ? `${text.slice(0, 37)}...` : text;
}
