import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import { simulate } from './simulate.js';

const module = parsePtx(
  readFileSync(new URL('../fixtures/definedness.sm_80.ptx', import.meta.url), 'utf8'),
);

const run = (entry: string, out = new Uint8Array(128)) =>
  simulate(module, {
    entry,
    grid: [1, 1, 1],
    block: [32, 1, 1],
    args: { out: { kind: 'buffer', bytes: out } },
  });

describe('definedness tracking (memcheck-style)', () => {
  it('lets a selp chain read a never-written register when every lane overwrites the result', () => {
    const out = new Uint8Array(128);
    const result = run('selp_chain', out);
    expect(result.findings).toEqual([]);
    // %f6 = tid + selp(tid, %f4, 1) = 2 * tid on every lane.
    expect(Array.from(new Float32Array(out.buffer))).toEqual(
      Array.from({ length: 32 }, (_, tid) => 2 * tid),
    );
  });

  it.each([
    [
      'use_store',
      'st.global.f32 [%rd2], %f3;',
      'read of %f3, whose value comes from a never-written register',
      32,
    ],
    [
      'use_selp_predicate',
      'st.global.f32 [%rd2], %f3;',
      'read of %f3, whose value comes from a never-written register',
      32,
    ],
    [
      'use_branch',
      '@%p1 bra $L_skip;',
      'guard reads %p1, whose value comes from a never-written register',
      32,
    ],
    [
      'use_address',
      'ld.global.f32 %f1, [%rd3];',
      'read of %rd3, whose value comes from a never-written register',
      32,
    ],
    [
      'use_shuffled',
      '@%p1 st.global.u32 [%rd2], %r3;',
      'read of %r3, whose value comes from a never-written register',
      1,
    ],
  ])('reports %s once, where the undefined value is used', (entry, at, message, count) => {
    const { findings } = run(entry);
    expect(findings).toHaveLength(1);
    expect(findings[0]?.category).toBe('uninitialized-register');
    expect(findings[0]?.instruction).toBe(at);
    expect(findings[0]?.message).toBe(message);
    expect(findings[0]?.occurrences).toBe(count);
  });
});
