import { PTX_ARCHS } from '@forge/ptx';
import { EDGE_DESCRIPTIONS, EDGE_GRIDS, EDGE_NAMES } from './edges.mjs';
import { ExpressionGenerator } from './expressions.mjs';

// KernelSpecs from the IR grammar: mostly well typed, with planted edges vendor tools may reject.

/** Edge plans a spec may carry (none for about a third of specs). */
export const PLANS = [
  'fold', 'deep-expr', 'deep-if', 'deep-for', 'names', 'many-params', 'bindings', 'many-buffers',
  'shared-index', 'dag', 'schedule', 'grid', 'f16',
]; // prettier-ignore

const WRITABLE = (memory) => memory.shared || memory.access === 'read_write';

class Context {
  constructor(p, plan) {
    this.p = p;
    this.plan = plan;
    this.tags = new Set(plan);
    this.useF16 = plan.has('f16') || p.chance(0.1);
    this.edgeRate = plan.size > 0 ? 0.05 : 0.01;
    // Emitters expand shared sub-expressions: at depth 14 Dawn spends ~100 s creating the pipeline.
    this.dagDepth = p.chance(0.9) ? p.int(3, 10) : p.int(11, 12);
    this.dags = 0;
    this.scope = [];
    this.names = new Set();
    this.counter = 0;
    this.buffers = [];
    this.params = [];
    this.shared = [];
    this.knobs = [];
  }
  tag(label) {
    this.tags.add(label);
  }
  memories() {
    return [...this.buffers, ...this.shared];
  }
  /** A fresh name, or (under the `names` plan) sometimes an edge name not used yet. */
  name(prefix, edgeChance = 0) {
    if (this.plan.has('names') && this.p.chance(edgeChance)) {
      const edge = this.p.one(EDGE_NAMES);
      if (!this.names.has(edge)) {
        this.names.add(edge);
        this.tag(`name:${prefix}`);
        return edge;
      }
    }
    const name = `${prefix}z${this.counter++}`;
    this.names.add(name);
    return name;
  }
}

function declarations(ctx, id) {
  const { p, plan } = ctx;
  const knobValue = p.one([32, 64, 128, 256]);
  const bounds = { min: 32, max: 1024, multipleOf: 32 };
  ctx.knobs.push({ name: ctx.name('wg', 0.2), value: knobValue, bounds });
  const bufferCount = plan.has('many-buffers') ? p.int(12, 22) : p.int(1, 4);
  for (let k = 0; k < bufferCount; k++) {
    const element = p.one(ctx.useF16 ? ['f32', 'u32', 'i32', 'f16'] : ['f32', 'u32', 'i32']);
    const access = k === 0 ? 'read_write' : p.one(['read', 'read_write', 'uniform']);
    ctx.buffers.push({ group: 0, binding: k, name: ctx.name('b', 0.3), element, access });
  }
  if (plan.has('bindings')) {
    const buffer = p.one(ctx.buffers);
    buffer.binding = p.one([999, 1000, 998, 64, 255, 256, 500]);
    if (p.chance(0.3)) buffer.group = p.int(1, 3);
    ctx.tag(`binding:${buffer.binding >= 999 ? buffer.binding : 'high'}`);
  }
  if (p.chance(0.7)) ctx.params.push({ name: ctx.name('n', 0.3), type: 'u32' });
  const paramCount = plan.has('many-params') ? p.int(600, 1250) : p.int(0, 3);
  for (let k = 0; k < paramCount; k++) {
    const many = plan.has('many-params');
    const type = many ? 'u32' : p.one(['f32', 'u32', 'i32']);
    // Most of a big param list goes unread: the parameter space, not the body, is under test.
    ctx.params.push({ name: many ? `q${k}` : ctx.name('s', 0.3), type, used: !many || k < 4 });
  }
  if (plan.has('many-params')) ctx.tag(`params:${paramCount >= 1080 ? '1080+' : 'under-1080'}`);
  const sharedCount = plan.has('shared-index')
    ? p.int(1, 2)
    : p.weighted([
        [3, 0],
        [1, 1],
        [1, 2],
      ]);
  for (let k = 0; k < sharedCount; k++) {
    // Big arrays probe the workgroup-memory limits (32 KiB WGSL incl. warp scratch, 48 KiB PTX).
    const [text, length] = p.one([['32', 32], ['64', 64], ['1', 1], ['wg', knobValue], ['wg / 32', knobValue / 32], ['8192', 8192], ['wg * 48', knobValue * 48], ['12288', 12288]]); // prettier-ignore
    const element = p.one(['f32', 'u32', 'i32']);
    ctx.shared.push({ name: ctx.name('t', 0.3), element, text: text.replace('wg', ctx.knobs[0].name), length, shared: true }); // prettier-ignore
  }
  const knob = ctx.knobs[0];
  const grid0 =
    ctx.params[0]?.type === 'u32' ? `ceil_div(${ctx.params[0].name}, ${knob.name})` : '1';
  const grid = [grid0, '1', '1'];
  if (plan.has('grid')) grid[p.int(0, 2)] = p.one(EDGE_GRIDS);
  return {
    id,
    semanticVersion: 1,
    entryPoint: ctx.name('k', 0.5),
    description: plan.has('names') ? p.one(EDGE_DESCRIPTIONS) : 'fuzz',
    buffers: ctx.buffers.map(({ group, binding, name, element, access }) => ({ group, binding, name, element, access })), // prettier-ignore
    params: ctx.params.map(({ name, type }) => ({ name, type })),
    shared: ctx.shared.map(({ name, element, text }) => ({ name, element, length: text })),
    schedule: ctx.knobs.map(({ name, value, bounds }) => ({ name, description: 'threads per workgroup', default: value, bounds: { ptx: bounds, wgsl: bounds } })), // prettier-ignore
    launch: { workgroupSize: knob.name, grid },
  };
}

class StatementGenerator {
  constructor(ctx) {
    this.ctx = ctx;
    this.p = ctx.p;
    this.e = new ExpressionGenerator(ctx);
  }

  localType() {
    return this.p.one(
      this.ctx.useF16 ? ['f32', 'u32', 'i32', 'bool', 'f16'] : ['f32', 'u32', 'i32', 'bool'],
    );
  }

  block(budget, top) {
    const { p, ctx } = this;
    const mark = ctx.scope.length;
    const statements = [];
    const count = p.int(top ? 2 : 1, Math.max(1, budget));
    for (let k = 0; k < count; k++) statements.push(this.statement(budget - count, top));
    ctx.scope.length = mark;
    return statements;
  }

  statement(budget, top) {
    const { p, ctx, e } = this;
    const depth = p.int(0, 3);
    const writable = ctx.memories().filter(WRITABLE);
    const mutable = ctx.scope.filter((local) => local.mutable);
    const options = [[5, () => this.let(depth)]];
    if (writable.length > 0) options.push([4, () => this.store(p.one(writable), depth)]);
    if (mutable.length > 0) {
      options.push([2, () => { const local = p.one(mutable); return { op: 'assign', name: local.name, value: e.expr(local.type, depth) }; }]); // prettier-ignore
    }
    if (budget > 0) options.push([2, () => this.if(budget, depth)], [2, () => this.for(budget)]);
    options.push([1, () => this.loadVector()]);
    // Nested barriers and warp ops probe Forge's uniformity analysis against Tint's.
    const sync = top ? 2 : 1;
    options.push([sync, () => ({ op: 'barrier' })], [sync, () => this.warpOp()]);
    return p.weighted(options)();
  }

  declare(name, type, mutable) {
    this.ctx.scope.push({ name, type, mutable });
  }

  let(depth) {
    const type = this.localType();
    const value = this.e.expr(type, depth);
    const name = this.ctx.name('v', 0.15);
    this.declare(name, type, true);
    return { op: 'let', name, type, value };
  }

  store(memory, depth) {
    return { op: 'store', memory: memory.name, index: this.e.index(memory), value: this.e.expr(memory.element, depth) }; // prettier-ignore
  }

  if(budget, depth) {
    return { op: 'if', condition: this.e.expr('bool', depth), then: this.block(budget - 1, false), else: this.p.chance(0.4) ? this.block(budget - 1, false) : [] }; // prettier-ignore
  }

  for(budget) {
    const { p, ctx, e } = this;
    const type = p.chance(0.8) ? 'u32' : 'i32';
    const end = p.chance(0.5) ? { op: 'const', type, value: p.int(1, 16) } : e.leaf(type);
    const step = { op: 'const', type, value: p.int(1, 4) };
    const name = ctx.name('i', 0.2);
    const start = { op: 'const', type, value: 0 };
    const mark = ctx.scope.length;
    this.declare(name, type, false);
    const body = this.block(budget - 1, false);
    ctx.scope.length = mark;
    return { op: 'for', name, type, start, end, step, body };
  }

  loadVector() {
    const { p, ctx } = this;
    const memory = p.one(ctx.memories());
    const width = p.one([2, 4]);
    const index = { op: 'mul', type: 'u32', args: [{ op: 'builtin', type: 'u32', name: 'local_id' }, { op: 'const', type: 'u32', value: width }] }; // prettier-ignore
    const names = Array.from({ length: width }, () => ctx.name('w'));
    for (const name of names) this.declare(name, memory.element, false);
    return { op: 'load_vector', names, type: memory.element, memory: memory.name, index };
  }

  warpOp() {
    const { p, ctx, e } = this;
    const type = p.one(['f32', 'u32', 'i32']);
    const name = ctx.name('r', 0.2);
    const value = e.expr(type, 2);
    this.declare(name, type, false);
    if (p.chance(0.5)) return { op: 'reduce', reduction: p.one(['add', 'min', 'max']), name, type, value }; // prettier-ignore
    const lane = p.chance(0.6) ? { op: 'const', type: 'u32', value: p.one([1, 2, 16, 31, 32, 0]) } : e.expr('u32', 1); // prettier-ignore
    return { op: 'shuffle', mode: p.one(['xor', 'down', 'up', 'idx']), name, type, value, lane };
  }
}

/** Wraps `body` in `n` nested `if`s or `for`s (Tint stops at about 63). */
function nest(ctx, body, n, kind) {
  const { p } = ctx;
  const uniform = p.chance(0.5);
  for (let k = 0; k < n; k++) {
    if (kind === 'if') {
      const condition = uniform ? { op: 'const', type: 'bool', value: true } : { op: 'lt', type: 'bool', args: [{ op: 'builtin', type: 'u32', name: 'local_id' }, { op: 'const', type: 'u32', value: 1000 - k }] }; // prettier-ignore
      body = [{ op: 'if', condition, then: body, else: [] }];
    } else {
      const z = { op: 'const', type: 'u32', value: 0 };
      body = [{ op: 'for', name: `nest${k}`, type: 'u32', start: z, end: { op: 'const', type: 'u32', value: 1 }, step: { op: 'const', type: 'u32', value: 1 }, body }]; // prettier-ignore
    }
  }
  return body;
}

const depthBucket = (n) => (n < 60 ? '<60' : n < 64 ? '60-63' : n < 127 ? '64-126' : n <= 200 ? '127-200' : '>200'); // prettier-ignore

/** One grammar spec with its targets: `{ source, tags, spec, schedule, ptxArchs, wgslFeatures }`. */
export function grammarCase(p, index) {
  const planCount = p.weighted([
    [4, 0],
    [6, 1],
    [2, 2],
  ]);
  const plan = new Set();
  // Constant folding has the most variants, so it is drawn three times as often.
  for (let k = 0; k < planCount; k++) plan.add(p.one([...PLANS, 'fold', 'fold']));
  const ctx = new Context(p, plan);
  const spec = declarations(ctx, `fuzz-${index}`);
  const statements = new StatementGenerator(ctx);
  let body = statements.block(p.int(2, 6), true);
  const firstBuffer = ctx.buffers[0];
  const sink = (value) => ({ op: 'store', memory: firstBuffer.name, index: { op: 'builtin', type: 'u32', name: 'local_id' }, value: statements.e.coerce(value, firstBuffer.element) }); // prettier-ignore
  if (plan.has('deep-expr')) {
    const n = p.weighted([
      [2, p.int(30, 62)],
      [3, p.int(63, 130)],
      [1, p.int(131, 250)],
    ]);
    ctx.tag(`deep-expr-depth:${depthBucket(n)}`);
    body.push(sink(statements.e.deep(p.one(['f32', 'u32', 'i32', 'bool']), n)));
  }
  for (const kind of ['if', 'for']) {
    if (!plan.has(`deep-${kind}`)) continue;
    const n = p.weighted([
      [2, p.int(30, 62)],
      [3, p.int(63, 130)],
      [1, p.int(131, 250)],
    ]);
    ctx.tag(`deep-${kind}-depth:${depthBucket(n)}`);
    body = p.chance(0.5) ? nest(ctx, body, n, kind) : [...body, ...nest(ctx, [sink({ op: 'const', type: 'u32', value: 1 })], n, kind)]; // prettier-ignore
  }
  const schedule = {};
  if (plan.has('schedule') || p.chance(0.2)) {
    const knob = ctx.knobs[0];
    const value = plan.has('schedule') ? p.one([0, 1, 31, 33, 2048, 1056, 4294967296, 1.5, -32]) : p.int(1, 32) * 32; // prettier-ignore
    schedule[knob.name] = value;
    if (plan.has('schedule')) ctx.tag('schedule-out-of-bounds');
  }
  return {
    source: 'grammar',
    tags: [...ctx.tags].sort(),
    spec: { ...spec, body },
    schedule: { ptx: schedule, wgsl: schedule },
    ptxArchs: [p.one(PTX_ARCHS)],
    wgslFeatures: wgslFeaturesFor(p, spec, body),
  };
}

/** `f16` when the spec needs it (now and then left out on purpose), `subgroups` half the time. */
export function wgslFeaturesFor(p, spec, body) {
  const text = JSON.stringify({ spec, body });
  const features = [];
  if (text.includes('"f16"') && p.chance(0.95)) features.push('f16');
  if (p.chance(0.5)) features.push('subgroups');
  return features;
}
