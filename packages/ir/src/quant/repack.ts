/*
 * Repacked (structure-of-arrays) rows for the K-quant mat-vec kernels; LAYOUTS.md has the picture.
 *
 * A native GGUF row is nb = cols/256 blocks back to back, each block mixing its fields (Q6_K's
 * 210-byte blocks even leave every other block 2-byte aligned). A repacked row keeps the same
 * bytes but groups each field of all nb blocks into one contiguous array. Every array starts on
 * a 16-byte boundary and every row on a 32-byte (DRAM sector) boundary, so a warp's lanes read
 * adjacent aligned words of one field and whole sectors. Rows stay contiguous and in order: a
 * workgroup streaming rows r..r+k reads one byte range. Inside an array, block b's field is at
 * `offset + b * bytesPerBlock`, its bytes in native order (so a kernel decodes exactly as on
 * native blocks); padding bytes are zero and unpack ignores them.
 *
 * With nb = cols / 256 and row r at r * rowStride (buffer base at least 32-byte aligned):
 *   q6_K: ql @0 (128·nb) | qh @128·nb (64·nb) | scales @192·nb (16·nb) | d @208·nb (2·nb);
 *         rowStride = 32·⌈210·nb/32⌉, so padding is rowStride − 210·nb < 32 bytes per row
 *         (none when cols is a multiple of 4096; 28 bytes per row at cols = 512).
 *   q4_K: qs @0 (128·nb) | meta @128·nb (16·nb: each block's d, dmin, scales[12]);
 *         rowStride = 32·⌈144·nb/32⌉: no padding for even nb, 16 bytes per row for odd nb.
 */
import { ValidationError } from '../errors.js';
import { checkQuantShape, type QuantType } from './formats.js';

/** The quantization types that have a repacked (structure-of-arrays) layout. */
export type RepackType = 'q4_K' | 'q6_K';

/** Every RepackType. */
export const REPACK_TYPES: readonly RepackType[] = ['q4_K', 'q6_K'];

/** One field of every block of a row, stored as one contiguous 16-byte-aligned array. */
export interface RepackedArray {
  readonly name: string;
  /** Where the field sits inside a native block. */
  readonly nativeOffset: number;
  readonly bytesPerBlock: number;
  /** Byte offset of the array from the start of the row section (a multiple of 16). */
  readonly offset: number;
  /** Bytes the array uses: blocksPerRow × bytesPerBlock. */
  readonly bytes: number;
  /** Bytes up to the next array (or the row's end): `bytes` plus zero padding. */
  readonly paddedBytes: number;
}

/**
 * Where everything lies in a repacked rows × cols matrix: per-row arrays of each block field, rows
 * `rowStride` bytes apart. Engines allocate `totalBytes` for the weight buffer, not `nativeBytes`.
 */
export interface RepackedLayout {
  readonly type: RepackType;
  readonly rows: number;
  readonly cols: number;
  readonly blocksPerRow: number;
  /** Bytes from one row section to the next (a multiple of 32). */
  readonly rowStride: number;
  readonly totalBytes: number;
  /** Size of the same matrix in native rows. */
  readonly nativeBytes: number;
  /** totalBytes − nativeBytes: zero bytes added for alignment. */
  readonly paddingBytes: number;
  readonly arrays: readonly RepackedArray[];
}

// Fields in the order they are laid out in a row section: [name, native offset, bytes per block].
const FIELDS: Readonly<Record<RepackType, readonly (readonly [string, number, number])[]>> = {
  q6_K: [
    ['ql', 0, 128],
    ['qh', 128, 64],
    ['scales', 192, 16],
    ['d', 208, 2],
  ],
  q4_K: [
    ['qs', 16, 128],
    ['meta', 0, 16],
  ],
};

/** Whether `type` has a repacked layout (q4_K, q6_K); names are case-sensitive. */
export function isRepackType(type: string): type is RepackType {
  return (REPACK_TYPES as readonly string[]).includes(type);
}

/** Exact byte offsets of the repacked layout of a rows × cols matrix. */
export function repackedLayout(type: QuantType, rows: number, cols: number): RepackedLayout {
  const format = checkQuantShape(type, rows, cols);
  const canonical = format.type;
  if (!isRepackType(canonical))
    throw new ValidationError([
      {
        path: 'type',
        message: `repacked layouts exist for ${REPACK_TYPES.join(' and ')} only, got ${canonical}`,
      },
    ]);
  const blocksPerRow = cols / format.blockSize;
  const fields = FIELDS[canonical];
  const offsets: number[] = [];
  let end = 0;
  for (const [, , bytesPerBlock] of fields) {
    offsets.push(align(end, 16));
    end = align(end, 16) + blocksPerRow * bytesPerBlock;
  }
  const rowStride = align(end, 32);
  const arrays = fields.map(([name, nativeOffset, bytesPerBlock], i): RepackedArray => {
    const offset = offsets[i] ?? 0;
    const next = offsets[i + 1] ?? rowStride;
    const bytes = blocksPerRow * bytesPerBlock;
    return { name, nativeOffset, bytesPerBlock, offset, bytes, paddedBytes: next - offset };
  });
  const nativeBytes = rows * blocksPerRow * format.blockBytes;
  const totalBytes = rows * rowStride;
  return {
    type: canonical,
    rows,
    cols,
    blocksPerRow,
    rowStride,
    totalBytes,
    nativeBytes,
    paddingBytes: totalBytes - nativeBytes,
    arrays,
  };
}

function align(bytes: number, to: number): number {
  return Math.ceil(bytes / to) * to;
}

function checkBytes(actual: number, expected: number, what: string): void {
  if (actual !== expected)
    throw new ValidationError([
      { path: 'bytes', message: `expected ${expected} bytes (${what}), got ${actual}` },
    ]);
}

/** Native GGUF rows → the repacked layout (see the comment at the top of this file). */
export function repack(type: QuantType, bytes: Uint8Array, rows: number, cols: number): Uint8Array {
  const layout = repackedLayout(type, rows, cols);
  checkBytes(bytes.length, layout.nativeBytes, `${rows} native ${type} rows of ${cols} values`);
  const out = new Uint8Array(layout.totalBytes);
  copyFields(layout, bytes, out, true);
  return out;
}

/** The repacked layout → native GGUF rows; the inverse of repack. */
export function unpack(type: QuantType, bytes: Uint8Array, rows: number, cols: number): Uint8Array {
  const layout = repackedLayout(type, rows, cols);
  checkBytes(bytes.length, layout.totalBytes, `${rows} repacked ${type} rows of ${cols} values`);
  const out = new Uint8Array(layout.nativeBytes);
  copyFields(layout, out, bytes, false);
  return out;
}

/** Moves every field between native and repacked positions, in the direction `toRepacked`. */
function copyFields(
  layout: RepackedLayout,
  native: Uint8Array,
  repacked: Uint8Array,
  toRepacked: boolean,
): void {
  const blockBytes = layout.type === 'q6_K' ? 210 : 144;
  const nativeRow = layout.blocksPerRow * blockBytes;
  for (let r = 0; r < layout.rows; r++) {
    for (const array of layout.arrays) {
      for (let b = 0; b < layout.blocksPerRow; b++) {
        const n = r * nativeRow + b * blockBytes + array.nativeOffset;
        const p = r * layout.rowStride + array.offset + b * array.bytesPerBlock;
        const size = array.bytesPerBlock;
        if (toRepacked) repacked.set(native.subarray(n, n + size), p);
        else native.set(repacked.subarray(p, p + size), n);
      }
    }
  }
}
