import {
  BINARY_OPS,
  COMPARISON_OPS,
  REDUCTIONS,
  SHUFFLE_MODES,
  UNARY_OPS,
  type Expr,
  ELEMENT_TYPES,
  type ElementType,
  defineKernel,
  ir,
} from '@forge/ir';
import { binaryTakes, unaryTakes } from './op-types.js';

const NAMES: Readonly<Record<ElementType, string>> = { f32: 'vf', f16: 'vh', u32: 'vu', i32: 'vi' };

/**
 * Test data: one kernel that uses every op of the tables on every type it takes, so each backend's
 * vendor compiler checks every row. The backends' op tests compile it; it computes nothing useful.
 */
export const OP_ZOO = defineKernel(
  {
    id: 'op-zoo',
    semanticVersion: 1,
    entryPoint: 'op_zoo',
    description: 'every IR op on every type, for table coverage',
    buffers: ELEMENT_TYPES.flatMap((type, index) => [
      { group: 0, binding: 2 * index, name: `in_${type}`, element: type, access: 'read' as const },
      {
        group: 0,
        binding: 2 * index + 1,
        name: `out_${type}`,
        element: type,
        access: 'read_write' as const,
      },
    ]),
    params: [{ name: 'n', type: 'u32' }],
    shared: [{ name: 'scratch', element: 'f16', length: 'workgroupSize' }],
    schedule: [
      {
        name: 'workgroupSize',
        description: 'threads',
        default: 64,
        bounds: {
          ptx: { min: 32, max: 1024, multipleOf: 32 },
          wgsl: { min: 32, max: 1024, multipleOf: 32 },
        },
      },
    ],
    launch: { workgroupSize: 'workgroupSize', grid: ['ceil_div(n, workgroupSize)', '1', '1'] },
  },
  (b) => {
    const t = b.let('t', b.localId());
    const values = Object.fromEntries<Expr>(
      ELEMENT_TYPES.map((type) => [type, b.let(NAMES[type], b.load(`in_${type}`, t))]),
    ) as Record<ElementType, Expr>;
    const shift = b.let('amount', ir.and(t, ir.u32(7)));
    for (const type of ELEMENT_TYPES) {
      const value = values[type];
      const accumulator = b.let(`acc_${type}`, value);
      const other = type === 'u32' || type === 'i32' ? accumulator : value;
      for (const op of UNARY_OPS.filter((candidate) => unaryTakes(candidate, type))) {
        b.assign(accumulator, ir.add(accumulator, { op, type, args: [value] } as Expr));
      }
      for (const op of BINARY_OPS.filter(
        (candidate) => !COMPARISON_OPS.includes(candidate) && binaryTakes(candidate, type),
      )) {
        const right =
          op === 'shl' || op === 'shr'
            ? shift
            : op === 'div' || op === 'rem'
              ? ir.constant(type, 3)
              : other;
        b.assign(accumulator, ir.add(accumulator, { op, type, args: [value, right] } as Expr));
      }
      for (const op of COMPARISON_OPS) {
        b.assign(
          accumulator,
          ir.select({ op, type: 'bool', args: [value, accumulator] } as Expr, accumulator, value),
        );
      }
      if (type === 'f32' || type === 'f16')
        b.assign(accumulator, ir.fma(value, accumulator, ir.constant(type, 0.5)));
      for (const target of ELEMENT_TYPES)
        b.assign(accumulator, ir.add(accumulator, ir.convert(type, ir.convert(target, value))));
      b.store(`out_${type}`, t, accumulator);
    }
    b.assign(
      values.u32 as never,
      ir.add(ir.bitcast('u32', values.f32), ir.bitcast('u32', values.i32)),
    );
    b.assign(values.f32 as never, ir.bitcast('f32', values.u32));
    b.store('out_i32', t, ir.dot4I8(values.u32, ir.xor(values.u32, t), values.i32));
    // Constant hi and shift too: Tint must not see a constant `<<` that shifts out a 1 bit.
    const funnel = ir.funnelShiftRight(values.u32, ir.xor(values.u32, t), shift);
    const constantParts = ir.funnelShiftRight(ir.funnelShiftRight(funnel, 0xffffffff, shift), 0x80000001, 7); // prettier-ignore
    b.assign(values.u32 as never, ir.funnelShiftRight(values.u32, constantParts, 0));
    // A constant mask (WGSL folds its complement) and a computed one.
    const merged = ir.bitSelect(0xc0c0c0c0, ir.shl(values.u32, 2), constantParts);
    b.assign(values.u32 as never, ir.bitSelect(ir.xor(values.u32, t), merged, values.u32));
    b.store('out_f32', t, ir.add(ir.unpackHalf(values.u32, 0), ir.unpackHalf(values.u32, 1)));
    // Computed halves, then a constant one at f16's largest finite value, which Tint folds.
    b.store('out_u32', t, ir.packHalf(values.f32, ir.unpackHalf(values.u32, 1)));
    b.store('out_u32', t, ir.packHalf(ir.unpackHalf(values.u32, 0), -65504));
    const flag = b.let('flag', ir.lt(values.f32, ir.f32(1)));
    const other = b.let('other', ir.ne(values.u32, ir.u32(0)));
    const mixed = b.let(
      'mixed',
      ir.select(flag, ir.and(flag, other), ir.or(ir.xor(flag, other), ir.not(other))),
    );
    b.if(
      ir.eq(mixed, ir.bool(true)),
      (then) => then.store('out_u32', t, ir.u32(1)),
      (otherwise) => otherwise.store('out_u32', t, ir.u32(2)),
    );
    b.store('scratch', t, values.f16);
    b.barrier();
    b.store('out_f16', t, b.load('scratch', ir.xor(t, ir.u32(1))));
    for (const type of ['f32', 'u32', 'i32'] as const) {
      for (const mode of SHUFFLE_MODES)
        b.shuffle(mode, `shuffled_${mode}_${type}`, values[type], ir.u32(mode === 'idx' ? 3 : 1));
      for (const reduction of REDUCTIONS)
        b.reduce(reduction, `reduced_${reduction}_${type}`, values[type]);
    }
    // Tensor cores where the target has them (m16n8k16, or two m16n8k8), else shuffles.
    const [word, real] = [values.u32 as Expr<'u32'>, values.f32 as Expr<'f32'>];
    const mixedWord = ir.xor(word, t);
    const [d0, , , d3] = b.mma('m16n8k16', ['mma_d0', 'mma_d1', 'mma_d2', 'mma_d3'], {
      a: [word, mixedWord, word, t],
      b: [mixedWord, word],
      c: [real, 0, real, 1],
    });
    b.store('out_f32', t, ir.add(d0, d3));
    b.for('k', { start: ir.i32(-4), end: ir.i32(4), step: ir.i32(2) }, (loop, k) =>
      loop.store('out_i32', t, k),
    );
  },
);
