// The input families of the `argmax` catalog kernel: ties, extremes, signed zeros, infinities, NaN.
import { ValidationError } from '../errors.js';
import { four } from './locals.js';
import { fillUniform, type Rng } from './random.js';

/** The input families of `argmax` (see argmaxFamily). */
export const ARGMAX_FAMILIES = [
  'ties',
  'twin-max',
  'max-first',
  'max-last',
  'all-equal',
  'negative',
  'signed-zeros',
  'infinities',
  'nan-one',
  'nan-first',
  'nan-many',
  'nan-and-inf',
] as const;

/**
 * NaN bit patterns the NaN families draw from: the quiet NaN, its negative, payloads with and
 * without the quiet bit (0x7f800001 is signaling), all ones, and a negative signaling NaN.
 */
export const ARGMAX_NAN_BITS: readonly number[] = [
  0x7fc00000, 0xffc00000, 0x7fa5a5a5, 0x7f800001, 0xffffffff, 0xff800001,
];

/** Sets x[i] to the f32 with these bits (a NaN's sign and payload kept: no JS number between). */
function setBits(x: Float32Array, i: number, bits: number): void {
  new Uint32Array(x.buffer, x.byteOffset, x.length)[i] = bits;
}

/**
 * x for an `argmax` family, uniform in ±magnitude but: `ties` whole multiples of magnitude/4 (the
 * max repeats across lanes and warps), `twin-max` one value above the rest at two random indices,
 * `max-first` / `max-last` the largest at 0 / n−1, `all-equal` every x magnitude/2, `negative` all
 * in [−magnitude, −magnitude/1000), `signed-zeros` that with a quarter of x after x[0] set to −0 or
 * +0 at random (the max is 0: the first zero wins, whatever its sign), `infinities` about 1% of x
 * −inf and 1% +inf (the first +inf wins). The NaN families (NaN ranks above everything, the first
 * NaN wins): `nan-one` one quiet NaN at a random index beside a larger-than-the-rest 2·magnitude,
 * `nan-first` a NaN at 0 (every thread starts from x[0]), `nan-many` about 1% of x (at least two)
 * NaN of every pattern of ARGMAX_NAN_BITS, `nan-and-inf` +inf and −inf before a NaN and +inf after.
 */
export function argmaxFamily(family: string, n: number, rng: Rng, magnitude: number): Float32Array {
  const x = fillUniform(new Float32Array(n), rng, magnitude);
  const anywhere = (): number => rng.integer(0, n - 1);
  switch (family) {
    case 'ties':
      return x.map((value) => (Math.round((4 * value) / magnitude) * magnitude) / 4);
    case 'twin-max': {
      const [i, j] = [anywhere(), anywhere()];
      x[i] = x[j] = 2 * magnitude;
      return x;
    }
    case 'max-first':
    case 'max-last':
      x[family === 'max-first' ? 0 : n - 1] = 2 * magnitude;
      return x;
    case 'all-equal':
      return x.fill(magnitude / 2);
    case 'negative':
      return x.map((value) => -Math.max(Math.abs(value), magnitude / 1000));
    case 'signed-zeros': {
      const negative = x.map((value) => -Math.max(Math.abs(value), magnitude / 1000));
      for (let i = 1; i < n; i++)
        if (rng.nextFloat() < 0.25) negative[i] = rng.nextFloat() < 0.5 ? -0 : 0;
      return negative;
    }
    case 'infinities':
      for (let i = 0; i < n; i++) {
        const draw = rng.nextFloat();
        if (draw < 0.02) x[i] = draw < 0.01 ? -Infinity : Infinity;
      }
      return x;
    case 'nan-one':
      x[anywhere()] = 2 * magnitude;
      setBits(x, anywhere(), 0x7fc00000);
      return x;
    case 'nan-first':
      x[anywhere()] = 2 * magnitude;
      setBits(x, 0, 0xffc00000);
      return x;
    case 'nan-many': {
      const count = Math.max(2, Math.round(n / 100));
      for (let k = 0; k < count; k++)
        setBits(x, anywhere(), ARGMAX_NAN_BITS[k % ARGMAX_NAN_BITS.length] ?? 0x7fc00000);
      return x;
    }
    case 'nan-and-inf': {
      // Ascending positions (distinct when n allows): +inf, −inf, NaN, +inf.
      const [a, b, c, d] = four((k) =>
        Math.min(n - 1, Math.floor(((k + rng.nextFloat()) * n) / 4)),
      );
      [x[a], x[b], x[d]] = [Infinity, -Infinity, Infinity];
      setBits(x, c, 0x7fa5a5a5);
      return x;
    }
    default:
      throw new ValidationError([
        { path: 'family', message: `'${family}' is not one of ${ARGMAX_FAMILIES.join(', ')}` },
      ]);
  }
}
