// Catalog kernels `add` (the residual add) and `silu-mul` (SwiGLU): f32 element-wise maps of two
// inputs, four elements a thread at a time.
import type { Expr } from '../body.js';
import { defineKernel } from '../builder.js';
import { add, div, mul } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { four } from './locals.js';
import { fillUniform } from './random.js';
import { field } from './shape-reader.js';

/** The input pairs of the maps, in binding order: literal, so the builder types their loads. */
type BinaryInputs = readonly ['a', 'b'] | readonly ['gate', 'up'];

/** What an element-wise kernel of two f32 inputs declares: its names and its map. */
interface BinaryMap {
  readonly id: string;
  readonly entryPoint: string;
  readonly description: string;
  /** The two input buffers, in binding order; the output is `y`. */
  readonly inputs: BinaryInputs;
  /** y from the two inputs' values (f32). */
  readonly combine: (first: Expr<'f32'>, second: Expr<'f32'>) => Expr<'f32'>;
  /** y from the two inputs' values in float64, from the math. */
  readonly reference: (first: number, second: number) => number;
}

// Each thread takes groups of four elements (16-byte loads and stores, so a warp moves 512
// contiguous bytes), grid-stride because WebGPU caps the grid at 65535 workgroups; the n % 4
// elements past the last whole group go to the first threads of the grid, one each.
function binaryMapSpec({ id, entryPoint, description, inputs, combine }: BinaryMap): KernelSpec {
  const [first, second] = inputs;
  return defineKernel(
    {
      ...{ id, semanticVersion: 1, entryPoint, description },
      buffers: [
        { group: 0, binding: 0, name: first, element: 'f32', access: 'read' },
        { group: 0, binding: 1, name: second, element: 'f32', access: 'read' },
        { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
      ],
      params: [{ name: 'n', type: 'u32' }],
      shared: [],
      schedule: [
        {
          name: 'workgroupSize',
          description: 'threads per workgroup; each thread takes four elements a step',
          default: 256,
          bounds: { ptx: { min: 32, max: 1024, multipleOf: 32 }, wgsl: { min: 1, max: 1024 } },
        },
      ],
      launch: {
        workgroupSize: 'workgroupSize',
        grid: ['min(ceil_div(n, workgroupSize * 4), 65535)', '1', '1'],
      },
    },
    (b) => {
      const { [first]: x, [second]: z, y } = b.memory;
      const size = b.schedule('workgroupSize');
      const n = b.param('n');
      const { stride, thread, groups } = b.let({
        stride: b.numWorkgroups().mul(size),
        thread: b.workgroupId().mul(size).add(b.localId()),
        groups: n.shr(2),
      });
      b.for('g', { start: thread, end: groups, step: stride }, (_, g) => {
        const { base } = b.let({ base: g.mul(4) });
        const xs = b.loadVector(first, base, ['x0', 'x1', 'x2', 'x3']);
        const zs = b.loadVector(second, base, ['z0', 'z1', 'z2', 'z3']);
        const ys = four((k) => combine(xs[k], zs[k]));
        b.storeVector('y', base, ys);
      });
      b.if(thread.lt(n.and(3)), () => {
        const { index } = b.let({ index: groups.mul(4).add(thread) });
        // Bound once: a map that reads an input twice would otherwise load it twice.
        const { xTail, zTail } = b.let({ xTail: x.at(index), zTail: z.at(index) });
        y.store(index, combine(xTail, zTail));
      });
    },
  );
}

/** log2(e): e^t = 2^(t·log2 e), the IR having exp2 only. */
const LOG2_E = Math.LOG2E;

/**
 * silu(g)·u as g / (1 + 2^(-g·log2 e)) · u: for g ≪ 0 the power overflows to +inf and g / inf is
 * −0, for g ≫ 0 it underflows to 0 and silu(g) is g, so no finite input yields NaN.
 */
export function siluTimes(gate: Expr<'f32'>, up: Expr<'f32'>): Expr<'f32'> {
  return div(gate, mul(gate, -LOG2_E).exp2().add(1)).mul(up);
}

const sizeOf = (shape: Shape): number => field(shape, 'n');

/** A map's catalog kernel but its tolerance: shape `n`, three buffers of n, output `y`. */
function binaryMapKernel(map: BinaryMap): Omit<CatalogKernel, 'tolerance'> {
  const [first, second] = map.inputs;
  return {
    spec: binaryMapSpec(map),
    shapeNames: ['n'],
    defaultShape: { n: 4096 },
    params: (shape) => ({ n: sizeOf(shape) }),
    bufferLengths: (shape) => ({
      [first]: sizeOf(shape),
      [second]: sizeOf(shape),
      y: sizeOf(shape),
    }),
    outputs: ['y'],
    reference(buffers, params) {
      const [x = [], z = []] = [buffers[first], buffers[second]];
      const y = Float64Array.from({ length: sizeOf(params) }, (_, i) =>
        map.reference(x[i] ?? 0, z[i] ?? 0),
      );
      return { y };
    },
  };
}

/** Catalog kernel `add`: y[i] = a[i] + b[i] for any n, f32 (the decode step's residual add). */
export const addF32: CatalogKernel = {
  ...binaryMapKernel({
    id: 'add',
    entryPoint: 'add_f32',
    description:
      'y[i] = a[i] + b[i] for i < n (f32, the residual add; four elements a thread, grid-stride)',
    inputs: ['a', 'b'],
    combine: (a, b) => add(a, b),
    reference: (a, b) => a + b,
  }),
  // One f32 rounding per element: NMSE about 1e-15.
  tolerance: 1e-10,
};

/** silu(g)·u in float64: g / (1 + e^-g) · u (e^-g overflowing to inf gives −0, as it should). */
export const siluMulReference = (gate: number, up: number): number =>
  (gate / (1 + Math.exp(-gate))) * up;

/** The gates `silu-mul`'s `extremes` family puts first: saturation, overflow of e^-g, zero. */
export const SILU_EXTREME_GATES: readonly number[] = [
  -100, 100, -89, 89, -88.5, 88.5, -87, 87, -30, 30, -16, 16, 0, -0, 1e-30, -1e-30,
];

/**
 * Catalog kernel `silu-mul`: y[i] = silu(gate[i])·up[i] for any n, f32 (SwiGLU), e^-x as
 * exp2(-x·log2 e) (PTX `ex2.approx`). Input family `extremes`: SILU_EXTREME_GATES, then gates
 * uniform in ±100·magnitude; `up` uniform in ±magnitude.
 */
export const siluMul: CatalogKernel = {
  ...binaryMapKernel({
    id: 'silu-mul',
    entryPoint: 'silu_mul',
    description:
      'y[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x), for i < n (f32, SwiGLU; four elements a thread, grid-stride)',
    inputs: ['gate', 'up'],
    combine: siluTimes,
    reference: siluMulReference,
  }),
  // The exponent's f32 rounding (|g|·2^-24 relative in e^-g) and ex2.approx's ~2 ulp: NMSE ~1e-13.
  tolerance: 1e-10,
  inputFamilies: ['extremes'],
  generateFamily({ shape, rng, magnitude }) {
    const n = sizeOf(shape);
    const gate = fillUniform(new Float32Array(n), rng, 100 * magnitude);
    gate.set(SILU_EXTREME_GATES.slice(0, n));
    return { gate, up: fillUniform(new Float32Array(n), rng, magnitude) };
  },
};
