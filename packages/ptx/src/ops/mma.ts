import type { MmaShape } from '@forge/ir';
import { isaVersion, smVersion, type PtxTarget } from '../targets.js';

/**
 * One way to issue an IR `mma` on a target: `steps` instructions in order, each taking the listed
 * words of the IR's `a` and `b` fragments, the first C the IR's `c` and each later C the D before.
 */
export interface MmaForm {
  /** Whether `target` (its sm and PTX ISA version) has this form. */
  readonly supports: (target: PtxTarget) => boolean;
  /** The full mnemonic, types included. */
  readonly instruction: string;
  /** Per instruction, the indices of the IR's `a` and `b` words it takes, in operand order. */
  readonly steps: readonly { readonly a: readonly number[]; readonly b: readonly number[] }[];
}

/**
 * The PTX forms of each IR mma shape, best first. m16n8k16 with f16 inputs needs sm_80 and ISA
 * 7.0; sm_75 (ISA 6.5) issues two m16n8k8, k 0–7 then 8–15: the m16n8k8 A fragment (rows g and
 * g + 8, k 2t and 2t + 1) is words a0, a1 of m16n8k16's and then a2, a3; its B word is b0, then b1.
 * A target with neither form has the op lowered to shuffles before printing (lowerMmaToShuffles).
 */
export const MMA_FORMS: { readonly [S in MmaShape]: readonly MmaForm[] } = {
  m16n8k16: [
    {
      supports: (target) => smVersion(target) >= 80 && isaVersion(target) >= 70,
      instruction: 'mma.sync.aligned.m16n8k16.row.col.f32.f16.f16.f32',
      steps: [{ a: [0, 1, 2, 3], b: [0, 1] }],
    },
    {
      supports: (target) => smVersion(target) >= 75 && isaVersion(target) >= 65,
      instruction: 'mma.sync.aligned.m16n8k8.row.col.f32.f16.f16.f32',
      steps: [
        { a: [0, 1], b: [0] },
        { a: [2, 3], b: [1] },
      ],
    },
  ],
};

/** The best form of `shape` on `target`, or undefined when it has none. */
export function mmaForm(shape: MmaShape, target: PtxTarget): MmaForm | undefined {
  return MMA_FORMS[shape].find((form) => form.supports(target));
}
