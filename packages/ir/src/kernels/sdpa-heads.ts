// The `heads` schedule knob of decode attention: query heads a workgroup carries in registers.
import type { Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import type { BodyBuilder, Declared } from '../builder.js';
import { add, gt, max } from '../expressions.js';

type Builder = BodyBuilder<Declared>;

/** The most query heads a workgroup carries; the spec holds code for this many. */
export const SDPA_MAX_HEADS = 8;
/** The knob's default: a GQA group of 4 or fewer shares every K/V load. */
export const SDPA_DEFAULT_HEADS = 4;
/** The knob's values (powers of two up to SDPA_MAX_HEADS), each a vector width or two vec4s. */
export const SDPA_HEAD_COUNTS = [1, 2, 4, 8] as const;
export type SdpaHeads = (typeof SDPA_HEAD_COUNTS)[number];

/** Head indices 0 to SDPA_MAX_HEADS − 1. */
export const ALL_HEADS: readonly number[] = Array.from({ length: SDPA_MAX_HEADS }, (_, h) => h);

/** The knob as an expression (a literal once the schedule is bound). */
export const headsKnob = (b: Builder): Expr<'u32'> => b.schedule('heads');

/**
 * `body` for head h only when h < heads: binding the schedule folds the test to a literal and
 * prunes the branch, so a schedule's code has its heads alone; head 0 always exists.
 */
export function forHead(b: Builder, h: number, body: (block: Builder) => void): void {
  if (h === 0) body(b);
  else b.if(gt(headsKnob(b), h), body);
}

/**
 * `each(h)` for the heads h < heads, then `after(n)` with n = heads, nested so that each head's
 * locals are in scope after it: if (heads > 1) { each(1); if (heads > 2) { each(2); each(3); …
 * after(4) } else after(2) } else after(1). Bound, it is the flat sequence for that n.
 */
export function ladderHeads(
  b: Builder,
  each: (block: Builder, h: number) => void,
  after: (block: Builder, n: SdpaHeads) => void,
): void {
  each(b, 0);
  const step = (block: Builder, built: SdpaHeads): void => {
    if (built === SDPA_MAX_HEADS) return after(block, built);
    const next = (built * 2) as SdpaHeads;
    block.if(
      gt(headsKnob(block), built),
      (more) => {
        for (let h = built; h < next; h++) each(more, h);
        step(more, next);
      },
      (done) => after(done, built),
    );
  };
  step(b, 1);
}

/** The suffix of a heads variant's locals: none at the default, whose emitted text keeps its names. */
export const headsTag = (n: SdpaHeads): string => (n === SDPA_DEFAULT_HEADS ? '' : `_x${n}`);

/**
 * `build(n, tag)` for the bound heads value n alone; locals of the variants need distinct names,
 * so `tag` suffixes them except at the default (whose emitted text keeps its names).
 */
export function switchHeads(
  b: Builder,
  build: (block: Builder, n: SdpaHeads, tag: string) => void,
): void {
  ladderHeads(
    b,
    () => undefined,
    (block, n) => build(block, n, headsTag(n)),
  );
}

/** Vector pieces of n words: one word, one vec2 or vec4, or two vec4s. */
const pieces = (n: SdpaHeads): readonly (readonly [number, number])[] =>
  n === 8
    ? [
        [0, 4],
        [4, 4],
      ]
    : [[0, n]];

/** memory[index + h] for h < n, in the widest aligned loads (index a multiple of min(n, 4)). */
export function loadHeads(
  b: Builder,
  memory: string,
  index: Expr<'u32'>,
  names: readonly string[],
): Var<'f32'>[] {
  const n = names.length as SdpaHeads;
  return pieces(n).flatMap(([first, width]) => {
    const at = first === 0 ? index : add(index, first);
    const part = names.slice(first, first + width);
    if (width === 1) return [b.let(part[0]!, b.load(memory, at) as Expr<'f32'>)];
    return b.loadVector(memory, at, part) as Var<'f32'>[];
  });
}

/** memory[index + h] = values[h] for h < values.length (1, 2, 4 or 8), as loadHeads reads them. */
export function storeHeads(
  b: Builder,
  memory: string,
  index: Expr<'u32'>,
  values: readonly Expr<'f32'>[],
): void {
  for (const [first, width] of pieces(values.length as SdpaHeads)) {
    const at = first === 0 ? index : add(index, first);
    const part = values.slice(first, first + width);
    if (width === 1) b.store(memory, at, part[0]!);
    else b.storeVector(memory, at, part as [Expr<'f32'>, Expr<'f32'>]);
  }
}

/**
 * The warp's `reduction` of each value (a head's), the heads' butterflies interleaved step by step
 * so their shuffles are in flight together; each value's steps and operand order are the `reduce`
 * statement's (xor 16, 8, 4, 2, 1; own value first), so the results are the same bits.
 */
export function reduceHeads(
  b: Builder,
  reduction: 'add' | 'max',
  names: readonly string[],
  values: readonly Expr<'f32'>[],
): Var<'f32'>[] {
  const totals = values.map((value, h) => b.let(names[h]!, value));
  for (let mask = 16; mask >= 1; mask >>= 1) {
    const others = totals.map((total, h) =>
      b.shuffle('xor', `${names[h]!}_xor${mask}`, total, mask),
    );
    totals.forEach((total, h) =>
      b.assign(total, reduction === 'add' ? add(total, others[h]!) : max(total, others[h]!)),
    );
  }
  return totals;
}
