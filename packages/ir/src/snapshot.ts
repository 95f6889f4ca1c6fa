import { ValidationError, type ValidationIssue } from './errors.js';
import { joinPath } from './json-shape.js';
import { seal } from './sealed.js';
import { EXPRESSION_PROTOTYPE } from './expressions.js';

/**
 * Most JSON values a spec may hold, counting a shared sub-object once per place it is used (as it
 * would be emitted). The largest catalog kernel (sdpa-decode-quantize) has about 51,000; a DAG that
 * expands past this would make checking and emission exponential, so it is rejected before either
 * runs.
 * One expression has a tighter bound of its own (the type checker's MAX_EXPRESSION_VALUES).
 */
export const MAX_SPEC_NODES = 500_000;
/** Deepest nesting of arrays and objects a snapshot copies; far above what validation accepts. */
export const MAX_SPEC_DEPTH = 1_000;
// A value with this many problems is reported by its first ones; the rest add nothing.
const MAX_ISSUES = 100;

/** Values `snapshotJson` made: deep-frozen plain JSON, safe to read any number of times. */
const snapshots = new WeakSet<object>();

/** Whether `value` is a snapshot, or a JSON primitive (which is its own). */
export function isSnapshot(value: unknown): boolean {
  if (value !== null && typeof value === 'object') return snapshots.has(value);
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/**
 * Copies the JSON data in `value`, reading each own enumerable property once (arrays by index up
 * to a length read once), into a deep-frozen, `seal`ed plain copy without shared sub-objects.
 * Expressions (on the methods-only EXPRESSION_PROTOTYPE) are copied as plain objects. Functions,
 * symbols, bigints, `undefined` array entries, class instances, cycles, nesting past
 * MAX_SPEC_DEPTH and more than MAX_SPEC_NODES values are issues at their path; `undefined` object
 * fields are dropped, as JSON.stringify drops them. A snapshot is returned as it is.
 */
export function snapshotJson(
  value: unknown,
  path = '',
): { value: unknown; issues: readonly ValidationIssue[] } {
  if (isSnapshot(value)) return { value, issues: [] };
  const copier = new Copier();
  let copied: Copied | undefined;
  try {
    copied = copier.copy(value, path, 0);
  } catch (error) {
    if (!(error instanceof TooManyIssues)) throw error;
  }
  if (copier.issues.length > 0 || copied === undefined)
    return { value: undefined, issues: copier.issues };
  const tree = copier.shared ? unshare(copied.value) : copied.value;
  if (tree !== null && typeof tree === 'object') snapshots.add(seal(tree));
  return { value: tree, issues: [] };
}

/** `snapshotJson(value, path)`'s copy; its issues throw as one ValidationError. */
export function takeSnapshot(value: unknown, path = ''): unknown {
  const { value: copy, issues } = snapshotJson(value, path);
  if (issues.length > 0) throw new ValidationError(issues);
  return copy;
}

interface Copied {
  readonly value: unknown;
  /** JSON values under and including this one, with shared sub-objects counted per use. */
  readonly size: number;
}

class TooManyIssues extends Error {}

class Copier {
  readonly issues: ValidationIssue[] = [];
  /** Whether some object was reached twice, so the copy is a DAG to be unshared. */
  shared = false;
  // Memoized on identity, so a DAG is read and counted in time linear in its distinct objects.
  private readonly done = new Map<object, Copied>();
  private readonly open = new Set<object>();

  copy(value: unknown, path: string, depth: number): Copied | undefined {
    switch (typeof value) {
      case 'string':
      case 'number':
      case 'boolean':
        return { value, size: 1 };
      case 'object':
        return value === null ? { value, size: 1 } : this.object(value, path, depth);
      case 'undefined':
        return this.fail(path, 'must be JSON data, got undefined (arrays may not have holes)');
      default:
        return this.fail(path, `must be JSON data, got a ${typeof value}`);
    }
  }

  private object(value: object, path: string, depth: number): Copied | undefined {
    const known = this.done.get(value);
    if (known !== undefined) {
      this.shared = true;
      return known;
    }
    if (this.open.has(value)) return this.fail(path, 'contains itself (a cycle is not JSON)');
    if (depth >= MAX_SPEC_DEPTH)
      return this.fail(path, `nests deeper than ${MAX_SPEC_DEPTH} levels`);
    this.open.add(value);
    const copied = this.read(() => this.children(value, path, depth), path);
    this.open.delete(value);
    if (copied === undefined) return undefined;
    if (copied.size > MAX_SPEC_NODES) {
      this.fail(
        path,
        `expands to more than ${MAX_SPEC_NODES} values (each use of a shared sub-object counts)`,
      );
      throw new TooManyIssues();
    }
    this.done.set(value, copied);
    return copied;
  }

  private children(value: object, path: string, depth: number): Copied | undefined {
    let size = 1;
    const add = (child: Copied | undefined): Copied | undefined => {
      // Each child adds at least one, so a huge array stops here, not after its whole length.
      size += child?.size ?? 1;
      if (size > MAX_SPEC_NODES) {
        this.fail(
          path,
          `expands to more than ${MAX_SPEC_NODES} values (each use of a shared sub-object counts)`,
        );
        throw new TooManyIssues();
      }
      return child;
    };
    if (Array.isArray(value)) {
      const length: unknown = (value as { length: unknown }).length;
      if (typeof length !== 'number' || !Number.isInteger(length) || length < 0)
        return this.fail(path, 'must be an array with an integer length');
      if (length > MAX_SPEC_NODES)
        return this.fail(path, `has more than ${MAX_SPEC_NODES} entries`);
      const items: unknown[] = [];
      for (let index = 0; index < length; index++) {
        const at = joinPath(path, index);
        const item = this.read(() => (value as unknown[])[index], at);
        items.push(add(this.copy(item, at, depth + 1))?.value);
      }
      return { value: Object.freeze(items), size };
    }
    const prototype: unknown = Object.getPrototypeOf(value);
    // An expression's prototype holds its methods only: its data is its own fields, as for JSON.
    if (prototype !== Object.prototype && prototype !== null && prototype !== EXPRESSION_PROTOTYPE)
      return this.fail(path, 'must be a plain object or array, got an instance of a class');
    const entries: [string, unknown][] = [];
    for (const key of Object.keys(value)) {
      const at = joinPath(path, key);
      const field = this.read(() => (value as Record<string, unknown>)[key], at);
      // JSON.stringify drops undefined fields; so does the snapshot, so both hash the same.
      if (field !== undefined) entries.push([key, add(this.copy(field, at, depth + 1))?.value]);
    }
    // fromEntries defines own properties, so a "__proto__" key stays data and reaches validation.
    return { value: Object.freeze(Object.fromEntries(entries)), size };
  }

  /** Runs a read of the caller's data; a throwing getter or proxy trap becomes an issue. */
  private read<T>(get: () => T, path: string): T | undefined {
    try {
      return get();
    } catch (error) {
      if (error instanceof TooManyIssues) throw error;
      const message = error instanceof Error ? error.message : String(error);
      // One line of printable ASCII, whatever the thrown message held.
      const line = (message.split('\n', 1)[0] ?? '').replace(/[^\x20-\x7e]/g, '?');
      return this.fail(
        path,
        `could not be read: ${line.length > 80 ? `${line.slice(0, 77)}...` : line}`,
      );
    }
  }

  private fail(path: string, message: string): undefined {
    this.issues.push({ path, message });
    if (this.issues.length >= MAX_ISSUES) throw new TooManyIssues();
    return undefined;
  }
}

/** A tree copy of a frozen DAG, so no two places of a snapshot are the same object. */
function unshare(value: unknown): unknown {
  if (value === null || typeof value !== 'object') return value;
  if (Array.isArray(value)) return Object.freeze(value.map(unshare));
  return Object.freeze(
    Object.fromEntries(Object.entries(value).map(([key, child]) => [key, unshare(child)])),
  );
}
