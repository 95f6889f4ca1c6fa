import type { ShuffleMode } from '@forge/ir';

/** `shfl.sync` mode and `c` operand per shuffle: c = 0x1f clamps bfly/down/idx to the warp, 0 for up. */
export const SHUFFLE_FORMS: Readonly<
  Record<ShuffleMode, { readonly mode: string; readonly clamp: string }>
> = {
  xor: { mode: 'bfly', clamp: '31' },
  down: { mode: 'down', clamp: '31' },
  up: { mode: 'up', clamp: '0' },
  idx: { mode: 'idx', clamp: '31' },
};

/** All 32 lanes take part in every warp operation of the IR. */
export const FULL_WARP_MASK = '-1';
