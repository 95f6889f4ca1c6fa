import type { KernelDeclarations } from '../builder.js';

/**
 * The interface every gemv kernel shares: weights `w` as u32 words, `x` and `y` f32, shapes `n_in`
 * and `n_out`, one 32-lane warp per row with `rowsPerWarp` rows each; engines launch them alike.
 */
export const GEMV_INTERFACE: Pick<
  KernelDeclarations,
  'buffers' | 'params' | 'shared' | 'schedule' | 'launch'
> = {
  buffers: [
    { group: 0, binding: 0, name: 'w', element: 'u32', access: 'read' },
    { group: 0, binding: 1, name: 'x', element: 'f32', access: 'read' },
    { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
  ],
  params: [
    { name: 'n_in', type: 'u32' },
    { name: 'n_out', type: 'u32' },
  ],
  shared: [],
  schedule: [
    {
      name: 'workgroupSize',
      description: 'threads per workgroup; each 32-lane warp streams its own rows',
      default: 128,
      bounds: {
        ptx: { min: 32, max: 1024, multipleOf: 32 },
        wgsl: { min: 32, max: 1024, multipleOf: 32 },
      },
    },
    {
      name: 'rowsPerWarp',
      description: 'rows each warp streams one after another',
      default: 1,
      bounds: { ptx: { min: 1, max: 8 }, wgsl: { min: 1, max: 8 } },
    },
  ],
  launch: {
    workgroupSize: 'workgroupSize',
    // WebGPU caps a grid dimension at 65535 workgroups; more rows run as a grid-stride loop.
    grid: ['min(ceil_div(n_out, workgroupSize / 32 * rowsPerWarp), 65535)', '1', '1'],
  },
};
