/** Objects `seal` deep-froze: their content can never change, so facts about them can be cached. */
const sealed = new WeakSet<object>();

/** Deep-freezes plain data and marks it sealed; returns it. */
export function seal<T>(value: T): T {
  const freeze = (node: unknown): void => {
    if (node === null || typeof node !== 'object' || Object.isFrozen(node)) return;
    Object.freeze(node);
    for (const child of Object.values(node)) freeze(child);
  };
  freeze(value);
  if (value !== null && typeof value === 'object') sealed.add(value);
  return value;
}

/**
 * `compute`, remembered per sealed argument (a catalog spec is analyzed and hashed once however
 * many targets it is emitted for); any other argument is computed afresh, as it may have changed.
 */
export function memoizeSealed<R>(compute: (value: unknown) => R): (value: unknown) => R {
  const results = new WeakMap<object, R>();
  return (value) => {
    if (value === null || typeof value !== 'object' || !sealed.has(value)) return compute(value);
    if (results.has(value)) return results.get(value) as R;
    const result = compute(value);
    results.set(value, result);
    return result;
  };
}
