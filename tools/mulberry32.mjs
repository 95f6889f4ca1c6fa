// mulberry32: a small seeded generator, the same numbers on any machine, for the tools that draw
// cases from a seed (the schedule sweep, the fuzzers).

/** A function giving uniform numbers in [0, 1) from `seed`. */
export function mulberry32(seed) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 2 ** 32;
  };
}
