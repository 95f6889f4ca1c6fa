import { defineKernel } from '../builder.js';
import { add, fma, mul } from '../expressions.js';
import type { CatalogKernel } from './catalog-kernel.js';

// WebGPU caps a grid dimension at 65535 workgroups, so larger n runs as a grid-stride loop.
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
    const { stride } = b.let({ stride: mul(b.numWorkgroups('x'), size) });
    const start = add(mul(b.workgroupId('x'), size), b.localId());
    b.for('i', { start, end: b.param('n'), step: stride }, (_, i) => {
      y.store(i, fma(x.at(i), b.param('scale'), b.param('bias')));
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
  params: (shape) => ({ n: shape['n'] ?? 0, scale: 1.5, bias: -0.25 }),
  bufferLengths: (shape) => ({ x: shape['n'] ?? 0, y: shape['n'] ?? 0 }),
  outputs: ['y'],
  reference(inputs, params) {
    const x = inputs['x'] ?? [];
    const n = params['n'] ?? 0;
    const y = new Float64Array(n);
    for (let i = 0; i < n; i++) y[i] = (x[i] ?? 0) * (params['scale'] ?? 0) + (params['bias'] ?? 0);
    return { y };
  },
  tolerance: 1e-10,
};
