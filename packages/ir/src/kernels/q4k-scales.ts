// Q4_K's 12 scale bytes (ggml's get_scale_min_k4), unpacked several sub-blocks a word.
import type { Value } from '../expression-methods.js';
import { bitSelect } from '../expressions.js';

/**
 * A Q4_K block's 6-bit scales and mins from its 3 scale words (header words 1-3), each shifted so
 * that the sub-blocks wanted sit in its low `bytes` bytes (2 or 4 sub-blocks at once). Byte k of
 * word 1 holds scale k (k < 4) in its low 6 bits and the top 2 bits of scale k + 4 above them;
 * word 2 the same for the mins; byte k of word 3 holds the low nibbles of scale k + 4 and, in its
 * high nibble, of min k + 4. Returns the scale and min bytes of sub-blocks k and k + 4, a byte each.
 */
export function q4kScalesMins(
  [s1, s2, s3]: readonly [Value<'u32'>, Value<'u32'>, Value<'u32'>],
  bytes: 2 | 4 = 2,
) {
  const [six, nibble, tops] =
    bytes === 2 ? [0x3f3f, 0x0f0f, 0x3030] : [0x3f3f3f3f, 0x0f0f0f0f, 0x30303030];
  const top = (word: Value<'u32'>) => word.shr(2).and(tops);
  return {
    scales: s1.and(six),
    mins: s2.and(six),
    highScales: bitSelect(nibble, s3, top(s1)),
    highMins: bitSelect(nibble, s3.shr(4), top(s2)),
  };
}
