import { CATALOG } from '@forge/ir/kernels';
import { PTX_ARCHS } from '@forge/ptx';
import { EDGE_NAMES, EDGE_VALUES } from './edges.mjs';
import { ExpressionGenerator } from './expressions.mjs';
import { wgslFeaturesFor } from './spec-grammar.mjs';

// Catalog kernels with one to three mutations each, emitted for every PTX arch.

const CATALOG_SPECS = [...CATALOG.values()].map((kernel) => kernel.spec);

/** Every object in a JSON tree, with its parent's key, depth first. */
function nodes(value, visit, key = '') {
  if (Array.isArray(value)) value.forEach((item) => nodes(item, visit, key));
  else if (value !== null && typeof value === 'object') {
    visit(value, key);
    for (const [child, item] of Object.entries(value)) nodes(item, visit, child);
  }
}

const expressions = (body) => {
  const found = [];
  nodes(body, (node, key) => {
    if (typeof node.op === 'string' && ['args', 'value', 'index', 'condition', 'start', 'end', 'step', 'lane'].includes(key)) found.push(node); // prettier-ignore
  });
  return found;
};

/** A value `knob` may take on `target` (in bounds), or one just outside now and then. */
function knobValue(p, knob, target) {
  // A knob without bounds for the target takes any value; the fuzz stays near its default.
  const {
    min,
    max,
    multipleOf = 1,
    powerOfTwo,
  } = knob.bounds?.[target] ?? {
    min: 1,
    max: knob.default,
  };
  if (p.chance(0.08)) return p.one([min - 1, max + 1, max + multipleOf, min + 1]);
  if (powerOfTwo) {
    const options = [];
    for (let v = 1; v <= max; v *= 2) if (v >= min && v % multipleOf === 0) options.push(v);
    return p.one(options);
  }
  const steps = Math.floor((max - min) / multipleOf);
  const first = Math.ceil(min / multipleOf) * multipleOf;
  return first + multipleOf * p.int(0, Math.max(0, steps));
}

const MUTATIONS = {
  entryPoint(p, spec) {
    spec.entryPoint = p.one(EDGE_NAMES);
  },
  rename(p, spec) {
    const kind = p.one(['buffers', 'params', 'shared']);
    const declared = spec[kind];
    if (declared.length === 0) return;
    const target = p.one(declared);
    const from = target.name;
    const to = p.one(EDGE_NAMES);
    target.name = to;
    nodes(spec.body, (node) => {
      if (node.memory === from) node.memory = to;
      if (node.op === 'param' && node.name === from) node.name = to;
    });
    const word = new RegExp(`\\b${from}\\b`, 'g');
    spec.launch.grid = spec.launch.grid.map((axis) => axis.replace(word, to));
  },
  binding(p, spec) {
    const buffer = p.one(spec.buffers);
    buffer.binding = p.one([999, 1000, 16, 17, 255]);
    if (p.chance(0.3)) buffer.group = p.int(0, 3);
  },
  manyParams(p, spec) {
    const count = p.int(900, 1200);
    for (let k = 0; k < count; k++) spec.params.push({ name: `extra${k}`, type: 'u32' });
  },
  manyBuffers(p, spec) {
    const count = p.int(12, 20);
    const start = spec.buffers.length;
    for (let k = 0; k < count; k++) spec.buffers.push({ group: 1, binding: start + k, name: `extra${k}`, element: 'f32', access: p.one(['read', 'read_write']) }); // prettier-ignore
  },
  constant(p, spec) {
    const constants = expressions(spec.body).filter((node) => node.op === 'const');
    if (constants.length === 0) return;
    const node = p.one(constants);
    node.value = p.one(EDGE_VALUES[node.type]);
  },
  negativeZero(p, spec) {
    const zeros = expressions(spec.body).filter((node) => node.op === 'const' && node.value === 0 && (node.type === 'f32' || node.type === 'f16')); // prettier-ignore
    if (zeros.length > 0) p.one(zeros).value = -0;
  },
  foldTrap(p, spec, ctx) {
    const slots = expressions(spec.body).filter(
      (node) => node.type !== 'bool' && node.op !== 'var',
    );
    if (slots.length === 0) return;
    const node = p.one(slots);
    const trap = new ExpressionGenerator(ctx).foldTrap(node.type);
    for (const key of Object.keys(node)) delete node[key];
    Object.assign(node, trap);
  },
  deepIf(p, spec) {
    const n = p.int(30, 130);
    let body = spec.body;
    for (let k = 0; k < n; k++) body = [{ op: 'if', condition: { op: 'const', type: 'bool', value: true }, then: body, else: [] }]; // prettier-ignore
    spec.body = body;
  },
};

/** A mutated catalog kernel: `{ source, tags, spec, schedule, ptxArchs, wgslFeatures }`. */
export function catalogCase(p) {
  const original = p.one(CATALOG_SPECS);
  const spec = JSON.parse(JSON.stringify(original));
  const tags = new Set([`catalog:${original.id}`]);
  const ctx = { p, plan: new Set(), useF16: false, knobs: spec.schedule, tag: (t) => tags.add(t) };
  const names = Object.keys(MUTATIONS);
  // Zero mutations: the catalog kernel itself at random in-bounds schedules (spill sweep).
  const count = p.weighted([
    [2, 0],
    [5, 1],
    [2, 2],
    [1, 3],
  ]);
  for (let k = 0; k < count; k++) {
    const name = p.one(names);
    tags.add(`mutation:${name}`);
    if (name === 'foldTrap' && spec.schedule.length === 0) continue;
    MUTATIONS[name](p, spec, ctx);
  }
  const schedule = { ptx: {}, wgsl: {} };
  for (const target of ['ptx', 'wgsl'])
    for (const knob of spec.schedule)
      if (p.chance(0.7)) schedule[target][knob.name] = knobValue(p, knob, target);
  return {
    source: 'catalog',
    tags: [...tags].sort(),
    spec,
    schedule,
    ptxArchs: [...PTX_ARCHS],
    wgslFeatures: wgslFeaturesFor(p, spec, []),
  };
}
