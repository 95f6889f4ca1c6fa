import { ValidationError } from './errors.js';
import { IssueCollector, describeJson, type JsonRecord } from './json-shape.js';
import { takeSnapshot } from './snapshot.js';

/**
 * A backend's target read once (a snapshot) and checked as a record at `target` with `kind` equal
 * to the backend's and no field but `kind` and `fields`; throws a ValidationError listing every
 * problem. The backend checks the fields' values.
 */
export function checkTargetRecord(
  value: unknown,
  kind: string,
  fields: readonly string[],
): JsonRecord {
  const issues = new IssueCollector();
  const snapshot = takeSnapshot(value, 'target');
  const copy = issues.record(snapshot, 'target', ['kind', ...fields]);
  if (copy !== undefined && copy['kind'] !== kind)
    issues.add('target.kind', `must be "${kind}", got ${describeJson(copy['kind'])}`);
  if (copy === undefined || issues.issues.length > 0) throw new ValidationError(issues.issues);
  // The frozen snapshot itself (record() checked a prototype-free copy of its own fields).
  return snapshot as JsonRecord;
}
