import { WARP } from './state.js';

// One list per mask, built on first use: steps that run the same lanes share it (no allocation).
const lists = new Map<number, readonly number[]>();
/** A bound on the cache, far above the masks a kernel's divergence makes. */
const MOST_LISTS = 4096;

/** The lanes whose bits are set in `mask` (lane 0 first); lists are shared, never to be changed. */
export function lanesOf(mask: number): readonly number[] {
  let list = lists.get(mask);
  if (list === undefined) {
    if (lists.size >= MOST_LISTS) lists.clear();
    const lanes: number[] = [];
    for (let lane = 0; lane < WARP; lane++) if (((mask >>> lane) & 1) === 1) lanes.push(lane);
    list = lanes;
    lists.set(mask, list);
  }
  return list;
}
