import { describe, expect, it } from 'vitest';
import { defineKernel } from './builder.js';
import { isMultiDispatch, kernelDispatches, launchScratch } from './dispatch.js';
import * as ir from './expressions.js';
import { semanticHash } from './hash.js';
import { getKernel } from './kernels/catalog.js';
import { printKernel } from './printer.js';
import { resolveSchedule } from './schedule.js';
import type { KernelSpec } from './spec.js';
import { checkSpec, validateSpec } from './validate.js';

// What a polluted Object.prototype could hold under the names of a spec's optional fields: values
// that would be valid (an extra dispatch, an extra buffer, bounds that refuse the default) and
// values that would not.
const POLLUTION: Readonly<Record<string, readonly unknown[]>> = {
  stages: [
    'polluted',
    [
      {
        entryPoint: 'polluted',
        shared: [],
        launch: { workgroupSize: '1', grid: ['1', '1', '1'] },
        body: [],
      },
    ],
  ],
  scratch: ['polluted', [{ group: 3, binding: 7, name: 'polluted', element: 'f32', length: '4' }]],
  bounds: ['polluted', { ptx: { min: 1, max: 1 }, wgsl: { min: 1, max: 1 } }],
  multipleOf: ['polluted', 7],
  powerOfTwo: ['polluted', true],
  args: ['polluted'],
  axis: ['y'],
};

/** Runs `check` with `Object.prototype[key]` set to `value`, and always removes it again. */
function polluted(key: string, value: unknown, check: () => void): void {
  Object.defineProperty(Object.prototype, key, { value, configurable: true, writable: true });
  try {
    check();
  } finally {
    delete (Object.prototype as Record<string, unknown>)[key];
  }
}

/** A fresh plain copy of a catalog spec: not the memoized snapshot, so it is checked anew. */
const copy = (id: string): unknown => JSON.parse(JSON.stringify(getKernel(id).spec));

/** What validation, hashing and dispatch make of a spec, as one comparable value. */
function outcome(id: string): unknown {
  const spec = validateSpec(copy(id));
  const { schedule } = getKernel(id).spec;
  const defaults = Object.fromEntries(schedule.map((knob) => [knob.name, knob.default]));
  return {
    issues: checkSpec(copy(id)),
    hash: semanticHash(copy(id)),
    multi: isMultiDispatch(spec),
    dispatches: kernelDispatches(spec).map((view) => view.entryPoint),
    scratch: launchScratch(spec, defaults),
    schedule: resolveSchedule(spec, 'ptx'),
    printed: printKernel(spec),
  };
}

describe('fields inherited from a polluted Object.prototype', () => {
  // affine-f32 has bounds, no stages or scratch; sdpa-decode has stages and scratch.
  const ids = ['affine-f32', 'sdpa-decode'];
  const clean = new Map(ids.map((id) => [id, outcome(id)]));
  const cases = Object.entries(POLLUTION).flatMap(([key, values]) =>
    values.flatMap((value) => ids.map((id) => [key, JSON.stringify(value), id, value] as const)),
  );

  it.each(cases)('Object.prototype.%s = %s leaves %s as it was', (key, _shown, id, value) => {
    polluted(key, value, () => expect(outcome(id)).toEqual(clean.get(id)));
    expect(Object.hasOwn(Object.prototype, key)).toBe(false);
  });

  it('are not read by the builder either', () => {
    const build = (): KernelSpec =>
      defineKernel(
        {
          id: 'plain',
          semanticVersion: 1,
          entryPoint: 'plain',
          description: 'a kernel without stages or scratch',
          buffers: [{ group: 0, binding: 0, name: 'y', element: 'u32', access: 'read_write' }],
          params: [],
          shared: [],
          schedule: [],
          launch: { workgroupSize: '32', grid: ['1', '1', '1'] },
        },
        (b) => b.store('y', b.localId(), ir.u32(1)),
      );
    const hash = semanticHash(build());
    for (const key of ['stages', 'scratch'])
      for (const value of POLLUTION[key] ?? [])
        polluted(key, value, () => expect(semanticHash(build())).toBe(hash));
  });

  it('do not make a missing required field present', () => {
    const { body: _body, ...rest } = copy('affine-f32') as Record<string, unknown>;
    polluted('body', [], () =>
      expect(checkSpec(rest)).toContainEqual({ path: 'body', message: 'is required' }),
    );
  });
});
