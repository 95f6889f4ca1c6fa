// A catalog kernel built the first time something reads it, so importing the catalog stays cheap.
import { InternalError } from '../errors.js';
import type { CatalogKernel } from './catalog-kernel.js';

/** The ids lazy kernels were declared with, so the catalog can key them without building them. */
const declaredIds = new WeakMap<CatalogKernel, string>();

/**
 * `build()`'s kernel, built on the first read of any of its fields: the large specs (decode
 * attention's about 200 ms of the catalog's 340 on this machine, the mat-vecs', argmax's) are a
 * cost a process emitting one other kernel need not pay. The kernel built must have the id
 * declared here.
 */
export function lazyKernel(id: string, build: () => CatalogKernel): CatalogKernel {
  let built: CatalogKernel | undefined;
  const kernel = (): CatalogKernel => {
    if (built === undefined) {
      const made = build();
      if (made.spec.id !== id)
        throw new InternalError('lazyKernel', `declared as '${id}', built as '${made.spec.id}'`);
      built = made;
    }
    return built;
  };
  // Every read, key listing and `in` test goes to the built kernel, so the proxy stands for it.
  const lazy = new Proxy({} as CatalogKernel, {
    get: (_, key) => Reflect.get(kernel(), key),
    has: (_, key) => Reflect.has(kernel(), key),
    ownKeys: () => Reflect.ownKeys(kernel()),
    getOwnPropertyDescriptor: (_, key) => {
      const descriptor = Reflect.getOwnPropertyDescriptor(kernel(), key);
      // The empty target holds none of these, so the proxy may only report them configurable.
      return descriptor === undefined ? undefined : { ...descriptor, configurable: true };
    },
  });
  declaredIds.set(lazy, id);
  return lazy;
}

/** A catalog kernel's id, read without building a lazy kernel. */
export const catalogIdOf = (kernel: CatalogKernel): string =>
  declaredIds.get(kernel) ?? kernel.spec.id;
