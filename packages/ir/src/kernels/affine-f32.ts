import { defineKernel } from '../builder.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { field, fields } from './shape-reader.js';

// One element a thread a trip; WebGPU caps a grid dimension at 65535 workgroups, so larger n runs
// as a grid-stride loop.
const spec = defineKernel(
  {
    id: 'affine-f32',
    semanticVersion: 1,
    entryPoint: 'affine_f32',
    description: 'y[i] = x[i] * scale + bias for i < n (f32, grid-stride loop)',
    buffers: [
      { group: 0, binding: 0, name: 'x', element: 'f32', access: 'read' },
      { group: 0, binding: 1, name: 'y', element: 'f32', access: 'read_write' },
    ],
    params: [
      { name: 'n', type: 'u32' },
      { name: 'scale', type: 'f32' },
      { name: 'bias', type: 'f32' },
    ],
    shared: [],
    schedule: [
      {
        name: 'workgroupSize',
        description: 'threads per workgroup',
        default: 256,
        bounds: { ptx: { min: 32, max: 1024, multipleOf: 32 }, wgsl: { min: 1, max: 1024 } },
      },
    ],
    launch: {
      workgroupSize: 'workgroupSize',
      grid: ['min(ceil_div(n, workgroupSize), 65535)', '1', '1'],
    },
  },
  (b) => {
    const { x, y } = b.memory;
    const size = b.schedule('workgroupSize');
    const { stride } = b.let({ stride: b.numWorkgroups().mul(size) });
    const start = b.workgroupId().mul(size).add(b.localId());
    b.for('i', { start, end: b.param('n'), step: stride }, (_, i) => {
      y.store(i, x.at(i).fma(b.param('scale'), b.param('bias')));
    });
  },
);

/**
 * Catalog kernel `affine-f32`: y[i] = x[i] * scale + bias for i < n, f32; a grid-stride loop, so
 * any n runs within the 65535-workgroup grid limit.
 */
export const affineF32: CatalogKernel = {
  spec,
  shapeNames: ['n'],
  defaultShape: { n: 4096 },
  params: (shape) => ({ n: field(shape, 'n'), scale: 1.5, bias: -0.25 }),
  bufferLengths: (shape) => ({ x: field(shape, 'n'), y: field(shape, 'n') }),
  outputs: ['y'],
  reference({ x = [] }, params) {
    const param = fields<'n' | 'scale' | 'bias'>(params);
    const [scale, bias] = [param('scale'), param('bias')];
    return { y: Float64Array.from({ length: param('n') }, (_, i) => (x[i] ?? 0) * scale + bias) };
  },
  tolerance: 1e-10,
};
