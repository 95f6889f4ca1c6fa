import type { BufferAccess, ElementType } from '@forge/ir';

/** Type suffix of a load or store of one element. */
export function memoryType(element: ElementType): string {
  return { f32: 'f32', f16: 'b16', u32: 'u32', i32: 's32' }[element];
}

/** `.v2`/`.v4` for a vector access of that many elements, nothing for one element. */
const vector = (width: number): string => (width === 1 ? '' : `.v${width}`);

/** Read-only buffers go through the non-coherent (texture) path; buffers are assumed not to alias. */
export function globalLoad(element: ElementType, access: BufferAccess, width = 1): string {
  return `ld.global${access === 'read_write' ? '' : '.nc'}${vector(width)}.${memoryType(element)}`;
}

export function globalStore(element: ElementType, width = 1): string {
  return `st.global${vector(width)}.${memoryType(element)}`;
}

export function sharedLoad(element: ElementType, width = 1): string {
  return `ld.shared${vector(width)}.${memoryType(element)}`;
}

export function sharedStore(element: ElementType, width = 1): string {
  return `st.shared${vector(width)}.${memoryType(element)}`;
}
