import {
  AXES,
  AXIS_BUILTINS,
  BINARY_OPERANDS,
  BINARY_OPS,
  BUILTIN_NAMES,
  UNARY_OPS,
} from '@forge/ir';
import { binaryTakes, unaryTakes } from '@forge/test-fixtures';
import { EDGE_VALUES } from './edges.mjs';

// Well-typed expression generation over a scope, with traps vendor tools fold at compile time.

const c = (type, value) => ({ op: 'const', type, value });
const un = (op, arg) => ({ op, type: arg.type, args: [arg] });
// The op lists come from the registry (UNARY_OPERANDS, BINARY_OPERANDS), so a new op is fuzzed.
const binaryOfKind = (...kinds) => BINARY_OPS.filter((op) => kinds.includes(BINARY_OPERANDS[op]));
const COMPARISONS = binaryOfKind('comparison');
const ARITHMETIC = binaryOfKind('arithmetic');
const INTEGER_BITWISE = binaryOfKind('integer', 'bitwise');
const SHIFTS = binaryOfKind('shift');
const binaryOn = (ops, type) => ops.filter((op) => binaryTakes(op, type));
const unaryOn = (type) => UNARY_OPS.filter((op) => unaryTakes(op, type));
const bin = (op, a, b) => ({ op, type: COMPARISONS.includes(op) ? 'bool' : a.type, args: [a, b] });
const cvt = (type, arg) => ({ op: 'convert', type, args: [arg] });
const bitcast = (type, arg) => ({ op: 'bitcast', type, args: [arg] });
const NUMERIC = ['f32', 'i32', 'u32'];

/** Generates expressions for one spec; `ctx` holds the picker, declarations, scope and tags. */
export class ExpressionGenerator {
  constructor(ctx) {
    this.ctx = ctx;
    this.p = ctx.p;
  }

  numericTypes() {
    return this.ctx.useF16 ? [...NUMERIC, 'f16'] : NUMERIC;
  }

  constant(type) {
    const { p } = this;
    if (p.chance(this.ctx.edgeRate)) {
      const value = p.one(EDGE_VALUES[type]);
      if (Object.is(value, -0)) this.ctx.tag('negative-zero');
      return c(type, value);
    }
    switch (type) {
      case 'bool':
        return c(type, p.chance(0.5));
      case 'u32':
        return c(type, p.int(0, 300));
      case 'i32':
        return c(type, p.int(-300, 300));
      case 'f16':
        return c(type, p.int(-400, 400) / 4);
      default:
        return c(type, Math.round(p.float(-100, 100) * 1000) / 1000);
    }
  }

  /** A leaf of `type`: constant, local, param, knob, builtin or load. */
  leaf(type) {
    const { p, ctx } = this;
    const options = [[3, () => this.constant(type)]];
    const locals = ctx.scope.filter((local) => local.type === type);
    if (locals.length > 0) options.push([6, () => ({ op: 'var', type, name: p.one(locals).name })]);
    const params = ctx.params.filter((param) => param.type === type && param.used !== false);
    if (params.length > 0)
      options.push([3, () => ({ op: 'param', type, name: p.one(params).name })]);
    if (type === 'u32') {
      options.push([3, () => this.builtin()]);
      options.push([1, () => ({ op: 'schedule', type, name: p.one(ctx.knobs).name })]);
    }
    const memories = ctx.memories().filter((memory) => memory.element === type);
    if (memories.length > 0) options.push([2, () => this.load(p.one(memories))]);
    return p.weighted(options)();
  }

  builtin() {
    const { p } = this;
    const name = p.one(BUILTIN_NAMES);
    return AXIS_BUILTINS.includes(name)
      ? { op: 'builtin', type: 'u32', name, axis: p.one(AXES) }
      : { op: 'builtin', type: 'u32', name };
  }

  /** A u32 index, usually the thread's global id, sometimes a constant at or past a shared array's end. */
  index(memory) {
    const { p } = this;
    if (memory.length !== undefined && p.chance(this.ctx.plan.has('shared-index') ? 0.6 : 0.02)) {
      this.ctx.tag('shared-const-index-oob');
      return c('u32', memory.length + p.one([0, 1, 7, 1000]));
    }
    if (memory.length !== undefined && p.chance(0.3))
      return c('u32', p.int(0, Math.max(0, memory.length - 1)));
    if (p.chance(0.5)) return { op: 'builtin', type: 'u32', name: 'local_id' };
    const global = bin(
      'add',
      bin('mul', { op: 'builtin', type: 'u32', name: 'workgroup_id', axis: 'x' }, this.knob()),
      { op: 'builtin', type: 'u32', name: 'local_id' },
    );
    return p.chance(0.7) ? global : this.expr('u32', 2);
  }

  knob() {
    return { op: 'schedule', type: 'u32', name: this.ctx.knobs[0].name };
  }

  load(memory) {
    return { op: 'load', type: memory.element, memory: memory.name, args: [this.index(memory)] };
  }

  /** An expression of `type` at most `depth` deep (deeper only through planted edge cases). */
  expr(type, depth) {
    const { p, ctx } = this;
    if (ctx.plan.has('fold') && p.chance(0.12)) return this.foldTrap(type);
    if (ctx.plan.has('dag') && ctx.dags < 2 && p.chance(0.05)) return this.dag(type, ctx.dagDepth);
    if (depth <= 0 || p.chance(0.3)) return this.leaf(type);
    const d = depth - 1;
    if (type === 'bool') {
      return p.weighted([
        [4, () => { const t = p.one(this.numericTypes()); return bin(p.one(COMPARISONS), this.expr(t, d), this.expr(t, d)); }],
        [2, () => bin(p.one(binaryOn([...INTEGER_BITWISE, ...COMPARISONS], 'bool')), this.expr('bool', d), this.expr('bool', d))],
        [1, () => un(this.pick(unaryOn('bool')), this.expr('bool', d))],
        [1, () => this.leaf('bool')],
      ])(); // prettier-ignore
    }
    const float = type === 'f32' || type === 'f16';
    const options = [
      [6, () => bin(p.one(binaryOn(ARITHMETIC, type)), this.expr(type, d), this.expr(type, d))],
      [2, () => ({ op: 'select', type, args: [this.expr('bool', d), this.expr(type, d), this.expr(type, d)] })],
      [2, () => cvt(type, this.expr(p.one(this.numericTypes().filter((t) => t !== type)), d))],
    ]; // prettier-ignore
    if (float) {
      options.push([4, () => un(this.pick(unaryOn(type)), this.expr(type, d))]);
      options.push([2, () => ({ op: 'fma', type, args: [this.expr(type, d), this.expr(type, d), this.expr(type, d)] })]); // prettier-ignore
    } else {
      options.push([2, () => un(this.pick(unaryOn(type)), this.expr(type, d))]);
      options.push([3, () => bin(p.one(binaryOn(INTEGER_BITWISE, type)), this.expr(type, d), this.expr(type, d))]); // prettier-ignore
      options.push([2, () => bin(p.one(binaryOn(SHIFTS, type)), this.expr(type, d), this.shiftAmount(d))]); // prettier-ignore
    }
    if (type !== 'f16')
      options.push([
        1,
        () => bitcast(type, this.expr(p.one(NUMERIC.filter((t) => t !== type)), d)),
      ]);
    if (type === 'u32')
      options.push([1, () => ({ op: 'funnel_shift_right', type, args: [this.expr('u32', d), this.expr('u32', d), this.shiftAmount(d)] })]); // prettier-ignore
    if (type === 'u32')
      options.push([1, () => ({ op: 'bit_select', type, args: [this.expr('u32', d), this.expr('u32', d), this.expr('u32', d)] })]); // prettier-ignore
    if (type === 'i32')
      options.push([1, () => ({ op: 'dot4_i8', type, args: [this.expr('u32', d), this.expr('u32', d), this.expr('i32', d)] })]); // prettier-ignore
    if (type === 'f32')
      options.push([1, () => ({ op: 'unpack_half', type, half: p.int(0, 1), args: [this.expr('u32', d)] })]); // prettier-ignore
    if (type === 'u32')
      options.push([1, () => ({ op: 'pack_half', type, args: [this.expr('f32', d), this.expr('f32', d)] })]); // prettier-ignore
    return p.weighted(options)();
  }

  /** One of `ops`; a single op is taken without a draw, so a seed's sequence stays as it was. */
  pick(ops) {
    return ops.length === 1 ? ops[0] : this.p.one(ops);
  }

  shiftAmount(depth) {
    const { p } = this;
    if (p.chance(0.5)) return c('u32', p.int(0, 31));
    return bin('and', this.expr('u32', depth), c('u32', 31));
  }

  /** A constant-only expression WGSL evaluates at shader creation and may reject. */
  foldTrap(type) {
    const { p, ctx } = this;
    const [kind, build] = p.one(FOLD_TRAPS);
    ctx.tag(`fold:${kind}`);
    return this.coerce(build(p, ctx), type);
  }

  /** Wraps `e` so it has `type` without making it less constant. */
  coerce(e, type) {
    if (e.type === type) return e;
    if (type === 'bool') return bin('ne', e, c(e.type, 0));
    if (e.type === 'bool') return { op: 'select', type, args: [e, c(type, 1), c(type, 0)] };
    if (type === 'f16' && !this.ctx.useF16) return e;
    return cvt(type, e);
  }

  /** A sub-expression shared 2^k times: `e = op(e, e)` k times over one leaf object. */
  dag(type, depth) {
    this.ctx.tag(`dag:${depth}`);
    this.ctx.dags++;
    // The shared leaf must not hold a DAG itself, or the tree grows as 2^(depth * nesting).
    const simple = (t) => (t === 'u32' ? this.builtin() : this.constant(t));
    let e = type === 'bool' ? bin('lt', this.builtin(), simple('u32')) : simple(type);
    const op = type === 'bool' ? 'and' : this.p.one(['add', 'max', 'min']);
    for (let k = 0; k < depth; k++) e = bin(op, e, e);
    return e;
  }

  /** A chain `n` levels deep over a non-constant leaf, in one of a few shapes. */
  deep(type, n) {
    const { p } = this;
    let e = type === 'u32' ? { op: 'builtin', type, name: 'local_id' } : this.coerce({ op: 'builtin', type: 'u32', name: 'local_id' }, type); // prettier-ignore
    const shape = p.one(['unary', 'add-left', 'add-right', 'select', 'convert']);
    this.ctx.tag(`deep-expr:${shape}`);
    for (let k = 0; k < n; k++) {
      if (shape === 'unary') e = un(type === 'u32' ? 'not' : type === 'bool' ? 'not' : 'neg', e);
      else if (shape === 'add-left' && type !== 'bool') e = bin('add', e, c(type, 1));
      else if (shape === 'add-right' && type !== 'bool') e = bin('add', c(type, 1), e);
      else if (shape === 'select')
        e = { op: 'select', type, args: [c('bool', true), e, type === 'bool' ? c(type, false) : c(type, 0)] }; // prettier-ignore
      else e = type === 'bool' ? un('not', e) : cvt(type, cvt(type === 'u32' ? 'i32' : 'u32', e));
    }
    return e;
  }
}

const zeroKnob = (ctx) => bin('sub', { op: 'schedule', type: 'u32', name: ctx.knobs[0].name }, { op: 'schedule', type: 'u32', name: ctx.knobs[0].name }); // prettier-ignore
const bigKnob = (ctx) => ({ op: 'schedule', type: 'u32', name: ctx.knobs[0].name });
const I32_MIN = -2147483648;

/** Constant expressions by kind; each is what WGSL's const-evaluation rules may refuse. */
const FOLD_TRAPS = [
  ['int-div-zero', (p) => bin(p.one(['div', 'rem']), c(p.one(['u32', 'i32']), 7), c('u32', 0))],
  ['int-div-zero', (p) => { const t = p.one(['u32', 'i32']); return bin(p.one(['div', 'rem']), c(t, 7), c(t, 0)); }],
  ['int-div-knob-zero', (p, ctx) => bin(p.one(['div', 'rem']), c('u32', 7), zeroKnob(ctx))],
  ['int-div-var-by-zero', (p) => bin(p.one(['div', 'rem']), { op: 'builtin', type: 'u32', name: 'local_id' }, c('u32', 0))],
  ['shift-const-32', (p) => bin(p.one(['shl', 'shr']), c(p.one(['u32', 'i32']), 1), c('u32', p.one([32, 33, 64, 0xffffffff])))],
  ['shift-var-by-32', (p) => bin(p.one(['shl', 'shr']), { op: 'builtin', type: 'u32', name: 'local_id' }, c('u32', p.one([32, 40])))],
  ['shift-by-knob', (p, ctx) => bin('shl', { op: 'builtin', type: 'u32', name: 'local_id' }, bigKnob(ctx))],
  ['float-div-zero', (p) => { const t = p.one(['f32', 'f16']); return bin('div', c(t, 1), c(t, p.one([0, -0]))); }],
  ['sqrt-negative', (p) => un(p.one(['sqrt', 'rsqrt']), c(p.one(['f32', 'f16']), -1))],
  ['log2-zero', (p) => un('log2', c(p.one(['f32', 'f16']), p.one([0, -1, -0])))],
  ['rsqrt-rcp-zero', (p) => un(p.one(['rsqrt', 'rcp']), c(p.one(['f32', 'f16']), p.one([0, -0])))],
  ['exp2-overflow', (p) => un('exp2', c('f32', p.one([128, 1000, 3e38])))],
  ['exp2-overflow-f16', (p) => un('exp2', c('f16', p.one([16, 100])))],
  ['f32-add-overflow', (p) => bin(p.one(['add', 'mul']), c('f32', 3e38), c('f32', p.one([3e38, 10])))],
  ['f16-overflow', (p) => bin(p.one(['add', 'mul']), c('f16', 65504), c('f16', p.one([65504, 2])))],
  ['f32-fma-overflow', () => ({ op: 'fma', type: 'f32', args: [c('f32', 3e38), c('f32', 3e38), c('f32', 0)] })],
  ['bitcast-inf-nan', (p) => bitcast('f32', c('u32', p.one([0x7f800000, 0x7fc00000, 0xff800000, 0x7f800001])))],
  ['bitcast-i32-nan', () => bitcast('f32', c('i32', -1))],
  ['unpack-half-inf-nan', (p) => ({ op: 'unpack_half', type: 'f32', half: 0, args: [c('u32', p.one([0x7c00, 0x7e00, 0xfc00, 0x7c01]))] })],
  ['unpack-half-high-inf', () => ({ op: 'unpack_half', type: 'f32', half: 1, args: [c('u32', 0x7c000000)] })],
  ['pack-half-range', (p) => ({ op: 'pack_half', type: 'u32', args: [c('f32', p.one([0, 65504])), c('f32', p.one([65520, -1e6, 3e38]))] })],
  ['convert-f16-range', (p) => cvt('f16', p.one([c('f32', 70000), c('f32', 3e38), c('u32', 0xffffffff), c('i32', -100000)]))],
  ['convert-int-range', (p) => cvt(p.one(['i32', 'u32']), c('f32', p.one([3e9, -1, -3e9, 3e38])))],
  ['int-overflow', () => bin('add', c('u32', 0xffffffff), c('u32', 1))],
  ['int-overflow', () => bin('sub', c('u32', 0), c('u32', 1))],
  ['int-overflow', () => bin('mul', c('i32', 65536), c('i32', 65536))],
  ['int-overflow', () => bin('add', c('i32', 2147483647), c('i32', 1))],
  ['dot4-i32-wrap', (p) => ({ op: 'dot4_i8', type: 'i32', args: [c('u32', p.one([0x7f7f7f7f, 0x80808080])), c('u32', 0x7f7f7f7f), c('i32', p.one([2147483647, I32_MIN]))] })],
  ['funnel-const-hi', (p) => ({ op: 'funnel_shift_right', type: 'u32', args: [c('u32', p.one([0, 0x89abcdef])), c('u32', p.one([0xffffffff, 0x80000001])), c('u32', p.one([0, 1, 7, 31]))] })],
  ['funnel-shift-const-32', (p) => ({ op: 'funnel_shift_right', type: 'u32', args: [{ op: 'builtin', type: 'u32', name: 'local_id' }, c('u32', 1), c('u32', p.one([32, 40]))] })],
  ['i32-min-neg-abs', (p) => un(p.one(['neg', 'abs']), c('i32', I32_MIN))],
  ['i32-min-div-minus-one', (p) => bin(p.one(['div', 'rem']), c('i32', I32_MIN), c('i32', -1))],
  ['nested-const-overflow', () => bin('mul', bin('mul', c('f32', 1e20), c('f32', 1e20)), c('f32', 1))],
  ['select-const-overflow', () => ({ op: 'select', type: 'f32', args: [c('bool', false), bin('mul', c('f32', 3e38), c('f32', 3e38)), c('f32', 0)] })],
  ['min-max-fold', (p) => bin(p.one(['min', 'max']), c('f32', -0), c('f32', 0))],
]; // prettier-ignore
