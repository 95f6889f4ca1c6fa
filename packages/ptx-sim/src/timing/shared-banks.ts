/** Shared memory has 32 banks of 4-byte words; a bank serves one distinct word per wavefront. */
export const BANKS = 32;

/** One warp instruction's shared-memory wavefronts, and the fewest its bytes could take. */
export interface Wavefronts {
  readonly wavefronts: number;
  readonly minimum: number;
}

/**
 * Wavefronts of one warp-level shared access from each lane's byte range (`starts[lane]`,
 * `ends[lane]`, lanes not in `lanes` absent). A warp accessing up to 4 bytes a lane is one phase
 * of 32 lanes, 8 bytes a lane two phases of 16 (half-warps), 16 bytes four of 8 (quarter-warps):
 * each phase moves at most 128 bytes. A phase takes as many wavefronts as the most distinct words
 * any one bank holds among its lanes' words (lanes reading the same word share it, a broadcast);
 * its minimum is its distinct words over 32 banks, rounded up.
 */
export function sharedWavefronts(
  lanes: readonly number[],
  starts: Float64Array,
  ends: Float64Array,
): Wavefronts {
  let widest = 0;
  for (const lane of lanes)
    widest = Math.max(widest, (ends[lane] as number) - (starts[lane] as number));
  const lanesPerPhase = widest > 8 ? 8 : widest > 4 ? 16 : 32;
  let wavefronts = 0;
  let minimum = 0;
  const phases = new Map<number, Set<number>>();
  for (const lane of lanes) {
    const phase = Math.floor(lane / lanesPerPhase);
    let words = phases.get(phase);
    if (words === undefined) phases.set(phase, (words = new Set()));
    const first = Math.floor((starts[lane] as number) / 4);
    const last = Math.floor(((ends[lane] as number) - 1) / 4);
    for (let word = first; word <= last; word++) words.add(word);
  }
  const perBank = new Int32Array(BANKS);
  for (const words of phases.values()) {
    perBank.fill(0);
    let most = 0;
    for (const word of words) {
      const bank = word % BANKS;
      const count = (perBank[bank] as number) + 1;
      perBank[bank] = count;
      if (count > most) most = count;
    }
    wavefronts += most;
    minimum += Math.ceil(words.size / BANKS);
  }
  return { wavefronts, minimum };
}
