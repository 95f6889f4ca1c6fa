import { describe, expect, it } from 'vitest';
import { ValidationError, type KernelSpec } from '@forge/ir';
import {
  CONSTANT_BOUNDARY_CASES,
  addChain,
  limitSpec,
  negChain,
  nestedIfs,
  storeF32,
} from '@forge/test-fixtures';
import { emitPtx } from './emit.js';
import { assemblePtx } from './ptxas.js';
import { ptxTarget } from './targets.js';

// The validator's limits against the real ptxas: what Forge accepts at each limit assembles, and
// the facts behind each rejection still hold.

const assemble = (source: string): ReturnType<typeof assemblePtx> => assemblePtx(source, 'sm_80');
const emitted = (spec: KernelSpec): string => emitPtx(spec, {}, ptxTarget('sm_80')).source;
const params = (count: number): KernelSpec['params'] =>
  Array.from({ length: count }, (_, index) => ({ name: `p${index}`, type: 'u32' as const }));

describe('ptxas at the limits Forge enforces', () => {
  it('assembles 4352 bytes of parameters, and rejects 4 more', () => {
    const source = emitted(limitSpec([], { params: params(1084) }));
    expect(assemble(source).ok).toBe(true);
    // One more u32 param, written into the module since Forge rejects the spec.
    const over = source.replace('\t.param .u32 param_p0,', '\t.param .u32 param_extra,\n$&');
    const result = assemble(over);
    expect(result.ok).toBe(false);
    expect(result.diagnostics).toMatch(/too much parameter space \(0x1104 bytes, 0x1100 max\)/);
    expect(() => emitted(limitSpec([], { params: params(1085) }))).toThrow(ValidationError);
  });

  it('assembles the constant boundary cases and the deepest nesting Forge accepts', () => {
    const body = [
      ...Object.values(CONSTANT_BOUNDARY_CASES).map(storeF32),
      ...nestedIfs(50, [storeF32(negChain(24))]),
      storeF32(addChain(99)),
    ];
    const result = assemble(emitted(limitSpec(body)));
    expect(result.diagnostics).toBe('');
    expect(result.ok).toBe(true);
  });

  it("rejects '_' as an entry point, as ptxas does", () => {
    const source = emitted(limitSpec([])).replace(/\.entry limit_probe\b/, '.entry _');
    expect(assemble(source).ok).toBe(false);
    expect(() => emitted({ ...limitSpec([]), entryPoint: '_' })).toThrow(/"_" alone/);
  });
});
