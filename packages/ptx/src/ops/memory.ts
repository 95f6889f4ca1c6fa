import type { BufferAccess, ElementType } from '@forge/ir';

/** Type suffix of a load or store of one element. */
export function memoryType(element: ElementType): string {
  return { f32: 'f32', f16: 'b16', u32: 'u32', i32: 's32' }[element];
}

/** Read-only buffers go through the non-coherent (texture) path; buffers are assumed not to alias. */
export function globalLoad(element: ElementType, access: BufferAccess): string {
  return `ld.global${access === 'read_write' ? '' : '.nc'}.${memoryType(element)}`;
}

export function globalStore(element: ElementType): string {
  return `st.global.${memoryType(element)}`;
}

export function sharedLoad(element: ElementType): string {
  return `ld.shared.${memoryType(element)}`;
}

export function sharedStore(element: ElementType): string {
  return `st.shared.${memoryType(element)}`;
}
