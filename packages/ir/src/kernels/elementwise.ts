// Catalog kernels `add` (the residual add) and `silu-mul` (SwiGLU): f32 element-wise maps of two
// inputs, four elements a thread at a time.
import type { Expr } from '../body.js';
import { defineKernel, type KernelDeclarations } from '../builder.js';
import { add, and, div, exp2, lt, mul, shr } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel } from './catalog-kernel.js';
import { fillUniform } from './random.js';

/** What an element-wise kernel of two f32 inputs declares: its names and its map. */
interface BinaryMap {
  readonly id: string;
  readonly entryPoint: string;
  readonly description: string;
  /** The two input buffers, in binding order; the output is `y`. */
  readonly inputs: readonly [string, string];
  /** y from the two inputs' values (f32). */
  readonly combine: (first: Expr<'f32'>, second: Expr<'f32'>) => Expr<'f32'>;
}

// Each thread takes groups of four elements (16-byte loads and stores, so a warp moves 512
// contiguous bytes), grid-stride because WebGPU caps the grid at 65535 workgroups; the n % 4
// elements past the last whole group go to the first threads of the grid, one each.
function binaryMapSpec(map: BinaryMap): KernelSpec {
  const [first, second] = map.inputs;
  const declarations: KernelDeclarations = {
    id: map.id,
    semanticVersion: 1,
    entryPoint: map.entryPoint,
    description: map.description,
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
  };
  return defineKernel(declarations, (b) => {
    const size = b.schedule('workgroupSize');
    const n = b.param('n') as Expr<'u32'>;
    const { stride, thread, groups } = b.let({
      stride: mul(b.numWorkgroups('x'), size),
      thread: add(mul(b.workgroupId('x'), size), b.localId()),
      groups: shr(n, 2),
    });
    b.for('g', { start: thread, end: groups, step: stride }, (loop, g) => {
      const { base } = loop.let({ base: mul(g, 4) });
      const x = loop.loadVector(first, base, ['x0', 'x1', 'x2', 'x3']) as Expr<'f32'>[];
      const z = loop.loadVector(second, base, ['z0', 'z1', 'z2', 'z3']) as Expr<'f32'>[];
      const value = (k: 0 | 1 | 2 | 3): Expr<'f32'> =>
        map.combine(x[k] as Expr<'f32'>, z[k] as Expr<'f32'>);
      loop.storeVector('y', base, [value(0), value(1), value(2), value(3)]);
    });
    b.if(lt(thread, and(n, 3)), (tail) => {
      const { index } = tail.let({ index: add(mul(groups, 4), thread) });
      // Bound once: a map that reads an input twice would otherwise load it twice.
      const { xTail, zTail } = tail.let({
        xTail: tail.load(first, index) as Expr<'f32'>,
        zTail: tail.load(second, index) as Expr<'f32'>,
      });
      tail.store('y', index, map.combine(xTail, zTail));
    });
  });
}

/** log2(e): e^t = 2^(t·log2 e), the IR having exp2 only. */
const LOG2_E = Math.LOG2E;

/**
 * silu(g)·u as g / (1 + 2^(-g·log2 e)) · u: for g ≪ 0 the power overflows to +inf and g / inf is
 * −0, for g ≫ 0 it underflows to 0 and silu(g) is g, so no finite input yields NaN.
 */
export function siluTimes(gate: Expr<'f32'>, up: Expr<'f32'>): Expr<'f32'> {
  return mul(div(gate, add(exp2(mul(gate, -LOG2_E)), 1)), up);
}

const ADD_SPEC = binaryMapSpec({
  id: 'add',
  entryPoint: 'add_f32',
  description:
    'y[i] = a[i] + b[i] for i < n (f32, the residual add; four elements a thread, grid-stride)',
  inputs: ['a', 'b'],
  combine: (a, b) => add(a, b),
});

const SILU_MUL_SPEC = binaryMapSpec({
  id: 'silu-mul',
  entryPoint: 'silu_mul',
  description:
    'y[i] = silu(gate[i]) * up[i], silu(x) = x / (1 + e^-x), for i < n (f32, SwiGLU; four elements a thread, grid-stride)',
  inputs: ['gate', 'up'],
  combine: siluTimes,
});

const sizeOf = (shape: Readonly<Record<string, number>>): number => shape['n'] ?? 0;

/** The catalog parts both maps share: shape `n`, three buffers of n, output `y`. */
function binaryMapParts(
  inputs: readonly [string, string],
  apply: (first: number, second: number) => number,
): Pick<
  CatalogKernel,
  'shapeNames' | 'defaultShape' | 'params' | 'bufferLengths' | 'outputs' | 'reference'
> {
  const [first, second] = inputs;
  return {
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
      const x = buffers[first] ?? [];
      const z = buffers[second] ?? [];
      const y = new Float64Array(sizeOf(params));
      for (let i = 0; i < y.length; i++) y[i] = apply(x[i] ?? 0, z[i] ?? 0);
      return { y };
    },
  };
}

/** Catalog kernel `add`: y[i] = a[i] + b[i] for any n, f32 (the decode step's residual add). */
export const addF32: CatalogKernel = {
  spec: ADD_SPEC,
  ...binaryMapParts(['a', 'b'], (a, b) => a + b),
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
  spec: SILU_MUL_SPEC,
  ...binaryMapParts(['gate', 'up'], siluMulReference),
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
