import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { parsePtx } from '../parser/index.js';
import type { FindingCategory } from './findings.js';
import { simulate, type KernelArgument } from './simulate.js';

const fixture = (name: string): string =>
  readFileSync(new URL(`../fixtures/sanitizer/${name}`, import.meta.url), 'utf8');
const zeros = (bytes: number): KernelArgument => ({ kind: 'buffer', bytes: new Uint8Array(bytes) });

interface PlantedBug {
  readonly file: string;
  readonly category: FindingCategory;
  /** The PTX text of the instruction the finding must point at. */
  readonly at: string;
  readonly block: number;
  readonly args: () => Record<string, KernelArgument>;
}

const BUGS: readonly PlantedBug[] = [
  {
    file: 'divergent-barrier',
    category: 'divergent-barrier',
    at: 'bar.sync 0;',
    block: 64,
    args: () => ({ out: zeros(4) }),
  },
  {
    file: 'exit-before-barrier',
    category: 'divergent-barrier',
    at: 'bar.sync 0;',
    block: 32,
    args: () => ({ out: zeros(128) }),
  },
  {
    file: 'shared-race',
    category: 'shared-race',
    at: 'ld.shared.u32 %r7, [%r6];',
    block: 32,
    args: () => ({ out: zeros(256) }),
  },
  {
    file: 'global-out-of-bounds',
    category: 'out-of-bounds',
    at: 'ld.global.f32 %f1, [%rd6];',
    block: 32,
    args: () => ({ x: zeros(128), y: zeros(128) }),
  },
  {
    file: 'shared-out-of-bounds',
    category: 'out-of-bounds',
    at: 'st.shared.u32 [%r4], %r1;',
    block: 32,
    args: () => ({ out: zeros(128) }),
  },
  {
    file: 'local-out-of-bounds',
    category: 'out-of-bounds',
    at: 'st.local.u32 [%r4], %r1;',
    block: 32,
    args: () => ({ out: zeros(128) }),
  },
  {
    file: 'param-out-of-bounds',
    category: 'out-of-bounds',
    at: 'ld.param.u32 %r1, [n+8];',
    block: 1,
    args: () => ({ out: zeros(4), n: { kind: 'scalar', value: 5 } }),
  },
  {
    file: 'f16-from-byte',
    category: 'out-of-bounds',
    at: 'ld.global.b16 %h1, [%rd3];',
    block: 1,
    args: () => ({ x: zeros(1), y: zeros(4) }),
  },
  {
    file: 'misaligned',
    category: 'misaligned',
    at: 'ld.global.f32 %f1, [%rd3+2];',
    block: 1,
    args: () => ({ x: zeros(8), y: zeros(4) }),
  },
  {
    file: 'uninitialized-register',
    category: 'uninitialized-register',
    at: 'st.global.u32 [%rd2], %r2;',
    block: 1,
    args: () => ({ out: zeros(4) }),
  },
  {
    file: 'shuffle-mask',
    category: 'shuffle-mask',
    at: 'shfl.sync.bfly.b32 %r2, %r1, 1, 31, -1;',
    block: 32,
    args: () => ({ out: zeros(128) }),
  },
  {
    file: 'async-copy-race',
    category: 'async-copy-race',
    at: 'ld.shared.v4.u32 {%r7, %r8, %r9, %r10}, [%r6];',
    block: 32,
    args: () => ({ x: zeros(512), y: zeros(512) }),
  },
  {
    file: 'trap',
    category: 'trap',
    at: '@!%p1 trap;',
    block: 32,
    args: () => ({ x: zeros(128), n: { kind: 'scalar', value: 32 } }),
  },
];

// The fixed f16 kernel is the same code given a buffer that holds a whole f16.
const FIXED_ARGS: Readonly<Record<string, () => Record<string, KernelArgument>>> = {
  'f16-from-byte': () => ({ x: zeros(2), y: zeros(4) }),
};

describe('sanitizer on planted bugs', () => {
  for (const bug of BUGS) {
    it(`${bug.file}: exactly one ${bug.category} finding, at the planted instruction`, () => {
      const result = simulate(parsePtx(fixture(`${bug.file}.ptx`)), {
        grid: [1, 1, 1],
        block: [bug.block, 1, 1],
        args: bug.args(),
      });
      expect(result.findings.map((finding) => [finding.category, finding.instruction])).toEqual([
        [bug.category, bug.at],
      ]);
      const [finding] = result.findings;
      expect(finding?.line).toBeGreaterThan(0);
      expect(finding?.cta).toEqual([0, 0, 0]);
      expect(finding?.thread).toHaveLength(3);
    });

    it(`${bug.file}.fixed: no findings`, () => {
      const args = (FIXED_ARGS[bug.file] ?? bug.args)();
      const result = simulate(parsePtx(fixture(`${bug.file}.fixed.ptx`)), {
        grid: [1, 1, 1],
        block: [bug.block, 1, 1],
        args,
      });
      expect(result.findings).toEqual([]);
    });
  }
});
