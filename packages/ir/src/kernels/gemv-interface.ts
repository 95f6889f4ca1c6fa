/** The buffers and params of every gemv kernel (quantized W as u32 words): engines launch them alike. */
export const GEMV_BINDINGS = {
  buffers: [
    { group: 0, binding: 0, name: 'w', element: 'u32', access: 'read' },
    { group: 0, binding: 1, name: 'x', element: 'f32', access: 'read' },
    { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
  ],
  params: [
    { name: 'n_in', type: 'u32' },
    { name: 'n_out', type: 'u32' },
  ],
} as const;

/** Words per sector: the 32-byte unit DRAM moves and the simulator's sector counter measures. */
export const SECTOR_WORDS = 8;
