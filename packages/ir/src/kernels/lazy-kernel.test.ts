import { describe, expect, it } from 'vitest';
import { CATALOG } from './catalog.js';
import { affineF32 } from './affine-f32.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { catalogIdOf, lazyKernel } from './lazy-kernel.js';

describe('lazyKernel', () => {
  it('builds once, on the first read, and then stands for the built kernel', () => {
    let builds = 0;
    const lazy = lazyKernel('affine-f32', () => (builds++, affineF32));
    expect(catalogIdOf(lazy)).toBe('affine-f32');
    expect(builds).toBe(0);
    expect(lazy.spec).toBe(affineF32.spec);
    expect(lazy.params(affineF32.defaultShape)).toEqual(affineF32.params(affineF32.defaultShape));
    expect('weights' in lazy).toBe('weights' in affineF32);
    expect(Object.keys(lazy)).toEqual(Object.keys(affineF32));
    expect({ ...lazy }).toEqual({ ...affineF32 });
    expect(builds).toBe(1);
  });

  it('refuses a kernel whose id is not the one declared', () => {
    const lazy = lazyKernel('rmsnorm', (): CatalogKernel => affineF32);
    expect(() => lazy.spec).toThrow("lazyKernel: declared as 'rmsnorm', built as 'affine-f32'");
  });

  it('keys the catalog by each kernel id, lazy or not', () => {
    for (const [id, kernel] of CATALOG) {
      expect(catalogIdOf(kernel)).toBe(id);
      expect(kernel.spec.id).toBe(id);
    }
  });
});
