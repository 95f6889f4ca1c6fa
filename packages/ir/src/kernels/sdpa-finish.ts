// Folds the warps' partial softmaxes of one workgroup into the split's partial: M = max_w m_w,
// L = Σ_w l_w·exp2(m_w − M) and acc = Σ_w acc_w·exp2(m_w − M), warp 0's first.
import { WARP_SIZE, type Expr } from '../body.js';
import type { Value } from '../expression-methods.js';
import { SDPA_NO_SCORE, SDPA_PASS_DIMS, SDPA_STAGE_WORDS, type HeadState } from './sdpa-attend.js';
import type { SdpaPass } from './sdpa-decode.js';
import { partialAt } from './sdpa-combine.js';
import { storeHeads, typed, type SdpaBuilder, type SdpaHeads } from './sdpa-heads.js';
import { itemAt, pair } from './tuples.js';

/** Dim pairs of a head a pass folds. */
const FOLD_PAIRS = SDPA_PASS_DIMS / 2;

/** A share as the stage's element (u32 words for an f16 cache), and back. */
const shareWord = ({ cache }: SdpaPass, value: Value<'f32'>): Expr =>
  cache === 'f16' ? value.bitcast('u32') : value;
const shareValue = ({ cache }: SdpaPass, word: Value): Value<'f32'> =>
  cache === 'f16' ? word.bitcast('f32') : typed('f32', word);

/** This warp's m and l of its n heads into `folded` and its lanes' acc into its `k_stage` stage. */
export function stashWarp(b: SdpaBuilder, pass: SdpaPass, state: HeadState[], n: SdpaHeads): void {
  const { lane, warp, pairs } = pass;
  // The heads' butterflies interleaved so their shuffles are in flight together; each is `reduce`'s
  // (xor 16, 8, 4, 2, 1; own value first), so the sums are the same bits.
  const sums = state.map(({ l }) => b.let('l_sum', l));
  for (let mask = 16; mask >= 1; mask >>= 1) {
    const others = sums.map((sum) => b.shuffle('xor', 'l_sum_xor', sum, mask));
    sums.forEach((sum, h) => b.assign(sum, sum.add(itemAt(others, h))));
  }
  b.if(lane.eq(0), () => {
    const base = warp.mul(b.schedule('heads').mul(2));
    storeHeads(
      b,
      'folded',
      base,
      state.map(({ m }) => m),
    );
    storeHeads(b, 'folded', base.add(n), sums);
  });
  // Warp w's share of head h's dims at w·SDPA_STAGE_WORDS + h·128 + 4·lane + 2c.
  const own = b.let('fold_own', warp.mul(SDPA_STAGE_WORDS).add(lane.shl(2)));
  // A lane's 4 dims are all in the head or all past it (head_dim is a multiple of 32).
  b.if(lane.shl(1).lt(pairs), () =>
    state.forEach(({ acc: [[a0, a1], [a2, a3]] }, h) => {
      const share = (value: Value<'f32'>) => shareWord(pass, value);
      const slot = h === 0 ? own : own.add(h * SDPA_PASS_DIMS);
      b.storeVector('k_stage', slot, [share(a0), share(a1), share(a2), share(a3)]);
    }),
  );
}

/**
 * After every warp stashed its share: each thread folds a dim pair of a head over the warps into
 * the split's partial, (M, L) by the head's first pair.
 */
export function foldWarps(b: SdpaBuilder, pass: SdpaPass): void {
  const { warps, pairs, firstHead, headsHere, headDim, groupDim, nHead, split, splits } = pass;
  const heads = b.schedule('heads');
  const statsWords = heads.mul(2);
  b.barrier();
  const step = warps.mul(WARP_SIZE);
  b.for('fold_at', { start: b.localId(), end: heads.mul(FOLD_PAIRS), step }, (_, i) => {
    const { foldHead, foldPair } = b.let({
      foldHead: i.shr(Math.log2(FOLD_PAIRS)),
      foldPair: i.and(FOLD_PAIRS - 1),
    });
    b.if(foldHead.lt(headsHere).and(foldPair.lt(pairs)), () => {
      const most = b.let('most', SDPA_NO_SCORE, 'f32');
      b.for('w_max', { start: 0, end: warps }, (__, w) => {
        b.assign(most, most.max(typed('f32', b.load('folded', w.mul(statsWords).add(foldHead)))));
      });
      const total = b.let('total', 0, 'f32');
      const sums = pair(() => b.let('fold_sum', 0, 'f32'));
      const slot = b.let('fold_slot', foldHead.shl(Math.log2(SDPA_PASS_DIMS)).add(foldPair.shl(1)));
      b.for('w_sum', { start: 0, end: warps }, (__, w) => {
        const base = b.let('stats_base', w.mul(statsWords).add(foldHead));
        const m = typed('f32', b.load('folded', base));
        const l = typed('f32', b.load('folded', base.add(heads)));
        const stage = w.mul(SDPA_STAGE_WORDS).add(slot);
        const words = b.loadVector('k_stage', stage, ['fold_word', 'fold_word']);
        const factor = b.let('fold_factor', m.sub(most).exp2());
        b.assign(total, l.fma(factor, total));
        for (const e of [0, 1] as const)
          b.assign(sums[e], shareValue(pass, words[e]).fma(factor, sums[e]));
      });
      // The split's row of the head: (firstHead + h)·splits + split.
      const row = firstHead.add(foldHead).mul(splits).add(split);
      const where = partialAt(nHead, splits, headDim, row);
      b.if(foldPair.eq(0), () => b.storeVector('partials', where.stats, [most, total]));
      b.storeVector('partials', where.acc.add(groupDim.add(foldPair.shl(1))), sums);
    });
  });
}
