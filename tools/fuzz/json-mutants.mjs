import { BINARY_OPS, UNARY_OPS } from '@forge/ir';

// Specs broken at the JSON level: the validator must reject them with a ForgeError, never crash.

const JUNK = [
  () => null,
  () => [],
  () => ({}),
  () => '',
  () => 'x',
  () => -1,
  () => 1.5,
  () => 2 ** 32,
  () => -0,
  () => Number.NaN,
  () => Number.POSITIVE_INFINITY,
  () => true,
  () => ({ op: 'const' }),
  () => ({ op: 'var', type: 'u32', name: 'constructor' }),
  () => JSON.parse('{"__proto__": {"op": "barrier"}}'),
  () => 'toString',
  () => '\u0000\n\u001b[31m',
  () => 'a'.repeat(10_000),
  () => [[[[[]]]]],
];

/** Every (container, key) slot of a JSON tree. */
function slots(value, found = []) {
  if (value !== null && typeof value === 'object') {
    for (const key of Object.keys(value)) {
      found.push([value, key]);
      slots(value[key], found);
    }
  }
  return found;
}

/** Replaces, deletes or adds one to three values anywhere in a copy of `spec`. */
export function mutateJson(p, spec, tag) {
  const copy = JSON.parse(JSON.stringify(spec));
  const count = p.int(1, 3);
  for (let k = 0; k < count; k++) {
    const all = slots(copy);
    const [container, key] = p.one(all);
    const action = p.weighted([
      [6, 'replace'],
      [2, 'delete'],
      [2, 'extra'],
      [2, 'op'],
    ]);
    tag(`json:${action}`);
    if (action === 'replace') container[key] = p.one(JUNK)();
    else if (action === 'delete') {
      if (Array.isArray(container)) container.splice(Number(key), 1);
      else delete container[key];
    } else if (action === 'extra' && !Array.isArray(container)) {
      container[p.one(['extra', '__proto__', 'constructor', 'op', 'args'])] = p.one(JUNK)();
    } else if (typeof container[key]?.op === 'string') {
      container[key].op = p.one([
        ...UNARY_OPS,
        ...BINARY_OPS,
        'fma',
        'dot4_i8',
        'funnel_shift_right',
        'bit_select',
        'pack_half',
        'select',
        'let',
        'store',
        'nop',
      ]);
    }
  }
  return copy;
}
