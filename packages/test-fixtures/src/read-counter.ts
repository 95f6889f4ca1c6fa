/** What `countReads` returns: the proxy and how often each property of each object was read. */
export interface ReadCounter<T> {
  readonly proxy: T;
  /** Every property read so far, as `path: count`, most-read first. */
  counts(): { path: string; reads: number }[];
}

/**
 * A deep Proxy over plain, unfrozen data (a frozen property must read as itself) that counts every read (`get`) of every property, for tests that a
 * consumer reads a caller's object only once. Nested objects are wrapped on first read, one proxy
 * per object, so a shared sub-object is counted as one.
 */
export function countReads<T extends object>(value: T): ReadCounter<T> {
  const reads = new Map<string, number>();
  const proxies = new Map<object, object>();
  const wrap = (target: object, path: string): object => {
    const known = proxies.get(target);
    if (known !== undefined) return known;
    const proxy = new Proxy(target, {
      get(object, key, receiver) {
        const found: unknown = Reflect.get(object, key, receiver);
        if (typeof key === 'symbol') return found;
        const at = `${path}/${key}`;
        reads.set(at, (reads.get(at) ?? 0) + 1);
        return found !== null && typeof found === 'object' ? wrap(found, at) : found;
      },
    });
    proxies.set(target, proxy);
    return proxy;
  };
  return {
    proxy: wrap(value, '') as T,
    counts: () =>
      [...reads].map(([path, count]) => ({ path, reads: count })).sort((a, b) => b.reads - a.reads),
  };
}
