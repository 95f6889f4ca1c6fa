import {
  EXPR_OPS,
  defineKernel,
  f16Bits,
  ir,
  type ElementArray,
  type Expr,
  type KernelSpec,
  type ScalarType,
  SCALAR_TYPES,
} from '@forge/ir';
import { COMPUTE_OPS, opTypes, type ComputeOp } from './op-types.js';

/** One output slot of a probe: `op` applied to operands of type `from`, yielding `to`. */
export interface OpProbeCase {
  readonly op: ComputeOp;
  readonly from: ScalarType;
  readonly to: ScalarType;
}

/** A probe kernel for one operand type, the cases it computes and its input table. */
export interface OpProbe {
  /** `f32`, or `f32-f16` for the f32 cases that yield f16 (kept apart: they need f16 support). */
  readonly name: string;
  readonly type: ScalarType;
  /** Whether any case reads or yields f16, so a WGSL target needs the `f16` feature. */
  readonly f16: boolean;
  readonly spec: KernelSpec;
  /**
   * Output slot k holds case k's result for every input pair, at `[k * pairs + pair]` of `out`
   * (u32 bits), or of `out_f16` (f16 bits) for a case yielding f16.
   */
  readonly cases: readonly OpProbeCase[];
  /** The input pairs (a, b); every case runs on every pair. */
  readonly pairs: readonly (readonly [a: number | boolean, b: number | boolean])[];
}

const F32_MAX = 3.4028234663852886e38;
/** Test data: edge values per operand type; every probe runs each op on every pair of them. */
export const OP_PROBE_VALUES: Readonly<Record<ScalarType, readonly (number | boolean)[]>> = {
  f32: [0, -0, 1, -1, 0.5, 2.5, -3.5, 0.1, 100.75, 2 ** -149, -(2 ** -126), F32_MAX, -(2 ** 31), 5e9, Infinity, -Infinity, NaN], // prettier-ignore
  f16: [0, -0, 1, -1, 0.5, 2.5, -3.5, 0.333251953125, 2 ** -24, -(2 ** -14), 65504, -1000, Infinity, -Infinity, NaN], // prettier-ignore
  u32: [0, 1, 2, 3, 7, 31, 32, 1000, 0x7fffffff, 0x80000000, 0xfffffffe, 0xffffffff],
  i32: [0, 1, -1, 2, -2, 7, -7, 31, 1000, 2 ** 31 - 1, -(2 ** 31), -(2 ** 31) + 1, -1000],
  bool: [false, true],
};

const BUFFER_ELEMENT = { f32: 'f32', f16: 'f16', u32: 'u32', i32: 'i32', bool: 'u32' } as const;

const node = (op: ComputeOp, type: ScalarType, args: readonly Expr[]): Expr =>
  ({ op, type, args }) as unknown as Expr;

/** The expression case `c` computes from operands a and b, a u32 shift amount and a condition. */
function caseExpression(c: OpProbeCase, a: Expr, b: Expr, shift: Expr, odd: Expr): Expr {
  const { op, from, to } = c;
  if (op === 'shl' || op === 'shr') return node(op, to, [a, shift]);
  if ((op === 'div' || op === 'rem') && (from === 'u32' || from === 'i32')) {
    // Integer division by zero is undefined in the IR: divide by 1 there instead.
    return node(op, to, [a, ir.select(ir.eq(b, ir.constant(from, 0)), ir.constant(from, 1), b)]);
  }
  if (op === 'select') return node(op, to, [odd, a, b]);
  if (op === 'fma') return node(op, to, [a, b, a]);
  // a's bits as the i32 accumulator: 0x7fffffff and 0x80000000 make the sum wrap both ways.
  if (op === 'dot4_i8') return node(op, to, [a, b, ir.bitcast('i32', a)]);
  // Shift amounts of 32 or more are undefined in the IR: t & 31 covers 0..31 instead.
  if (op === 'funnel_shift_right') return node(op, to, [a, b, shift]);
  // Mask a picks b's bits over ~(t & 31)'s: high bits set, the low five varying with the pair.
  if (op === 'bit_select') return node(op, to, [a, b, ir.not(shift as Expr<'u32'>)]);
  if (op === 'convert' || op === 'bitcast') return node(op, to, [a]);
  if (op === 'unpack_half') {
    // The high half mixes both inputs: a's high bits with b's low bits.
    return { op, type: 'f32', half: 1, args: [ir.xor(a as Expr<'u32'>, ir.shl(b, 16))] } as Expr;
  }
  return node(op, to, EXPR_OPS[op].arity === 1 ? [a] : [a, b]);
}

/** A non-f16 result as u32 bits: f32 and i32 bitcast, bool as 0 or 1. */
function asBits(value: Expr, type: ScalarType): Expr<'u32'> {
  switch (type) {
    case 'u32':
      return value as Expr<'u32'>;
    case 'f32':
    case 'i32':
      return ir.bitcast('u32', value);
    case 'bool':
      return ir.select(value as Expr<'bool'>, ir.u32(1), ir.u32(0));
    case 'f16':
      throw new TypeError('f16 results are stored to out_f16');
  }
}

function buildProbe(type: ScalarType, f16: boolean): OpProbe | undefined {
  const cases = COMPUTE_OPS.flatMap((op) =>
    opTypes(op)
      .filter(([from, to]) => from === type && (from === 'f16' || to === 'f16') === f16)
      .map(([from, to]) => ({ op, from, to })),
  );
  if (cases.length === 0) return undefined;
  const name = f16 && type !== 'f16' ? `${type}-f16` : type;
  const values = OP_PROBE_VALUES[type];
  const pairs = values.flatMap((a) => values.map((b) => [a, b] as const));
  const element = BUFFER_ELEMENT[type];
  const spec = defineKernel(
    {
      id: `op-probe-${name}`,
      semanticVersion: 1,
      entryPoint: `op_probe_${name.replace('-', '_')}`,
      description: `every op on ${type} operands${f16 ? ' involving f16' : ''}, over input pairs`,
      buffers: [
        { group: 0, binding: 0, name: 'a', element, access: 'read' },
        { group: 0, binding: 1, name: 'b', element, access: 'read' },
        { group: 0, binding: 2, name: 'out', element: 'u32', access: 'read_write' },
        // f16 results go to f16 storage: widening them in the shader is not reliable (lavapipe
        // folds f32(f16(x)) to x), and storing is how a kernel's f16 results leave it anyway.
        ...(cases.some((c) => c.to === 'f16')
          ? [{ group: 0, binding: 3, name: 'out_f16', element: 'f16', access: 'read_write' } as const] // prettier-ignore
          : []),
      ],
      params: [{ name: 'n', type: 'u32' }],
      shared: [],
      schedule: [],
      launch: { workgroupSize: '64', grid: ['ceil_div(n, 64)', '1', '1'] },
    },
    (body) => {
      const t = body.let('t', ir.add(ir.mul(body.workgroupId(), 64), body.localId()));
      body.if(ir.lt(t, body.param('n')), (then) => {
        const load = (name: 'a' | 'b'): Expr =>
          type === 'bool' ? ir.ne(then.load(name, t), 0) : then.load(name, t);
        const a = then.let('va', load('a'));
        const b = then.let('vb', load('b'));
        const shift = then.let('amount', ir.and(t, 31));
        const odd = then.let('odd', ir.eq(ir.and(t, 1), 1));
        cases.forEach((c, slot) => {
          const index = ir.add(ir.mul(body.param('n'), slot), t);
          const result = caseExpression(c, a, b, shift, odd);
          if (c.to === 'f16') then.store('out_f16', index, result);
          else then.store('out', index, asBits(result, c.to));
        });
      });
    },
  );
  return { name, type, f16, spec, cases, pairs };
}

/**
 * Test data: probe kernels per scalar operand type, together computing every registry op on every
 * type it takes (see `opTypes`) on every pair of `OP_PROBE_VALUES`; results are stored as u32 bits
 * so engines compare bitwise. Cases involving f16 sit in probes of their own (`f16: true`). A new
 * op or operand type is picked up from the registry with no edit here.
 */
export const OP_PROBES: readonly OpProbe[] = SCALAR_TYPES.flatMap((type) =>
  [false, true].flatMap((f16) => buildProbe(type, f16) ?? []),
);

/** A fresh set of buffers and params for `probe`: inputs filled from its pairs, outputs zeroed. */
export function opProbeInputs(probe: OpProbe): {
  buffers: Record<string, ElementArray>;
  params: { n: number };
} {
  const n = probe.pairs.length;
  const column = (side: 0 | 1): ElementArray => {
    const raw = probe.pairs.map((pair) => pair[side]);
    switch (probe.type) {
      case 'f32':
        return Float32Array.from(raw as number[]);
      case 'f16':
        return Uint16Array.from(raw as number[], f16Bits);
      case 'i32':
        return Int32Array.from(raw as number[]);
      case 'u32':
        return Uint32Array.from(raw as number[]);
      case 'bool':
        return Uint32Array.from(raw as boolean[], Number);
    }
  };
  const size = n * probe.cases.length;
  const buffers: Record<string, ElementArray> = { a: column(0), b: column(1), out: new Uint32Array(size) }; // prettier-ignore
  if (probe.cases.some((c) => c.to === 'f16')) buffers['out_f16'] = new Uint16Array(size);
  return { buffers, params: { n } };
}

/** A probe's results after a run over `buffers`: per slot and pair, u32 bits or f16 bits. */
export function opProbeResults(
  probe: OpProbe,
  buffers: Readonly<Record<string, ElementArray>>,
): Uint32Array {
  const pairs = probe.pairs.length;
  const words = Uint32Array.from(buffers['out'] as Uint32Array);
  const halves = buffers['out_f16'];
  probe.cases.forEach((c, slot) => {
    if (c.to !== 'f16' || halves === undefined) return;
    for (let pair = 0; pair < pairs; pair++) words[slot * pairs + pair] = halves[slot * pairs + pair] ?? 0; // prettier-ignore
  });
  return words;
}
