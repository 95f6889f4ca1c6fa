// ggml's tensor types as GGUF stores them: id, name, and the block a type packs values into, so the
// bytes of any tensor can be bounded and placed, even one of a type Forge does not compute with.

/** One ggml type: values per block and bytes per block (ggml's blck_size and type_size). */
export interface GgmlType {
  readonly id: number;
  /** ggml_type_name's spelling: `f32`, `q4_K`, `iq4_xs`. */
  readonly name: string;
  readonly blockSize: number;
  readonly blockBytes: number;
}

const QK_K = 256;

// ggml.h's enum ggml_type with ggml's type traits; ids 4, 5, 31–33 and 36–38 were removed upstream.
const TYPES: readonly (readonly [number, string, number, number])[] = [
  [0, 'f32', 1, 4],
  [1, 'f16', 1, 2],
  [2, 'q4_0', 32, 2 + 16],
  [3, 'q4_1', 32, 2 + 2 + 16],
  [6, 'q5_0', 32, 2 + 4 + 16],
  [7, 'q5_1', 32, 2 + 2 + 4 + 16],
  [8, 'q8_0', 32, 2 + 32],
  [9, 'q8_1', 32, 4 + 4 + 32],
  [10, 'q2_K', QK_K, 2 + 2 + QK_K / 16 + QK_K / 4],
  [11, 'q3_K', QK_K, 2 + QK_K / 4 + QK_K / 8 + 12],
  [12, 'q4_K', QK_K, 2 + 2 + QK_K / 2 + 12],
  [13, 'q5_K', QK_K, 2 + 2 + QK_K / 2 + QK_K / 8 + 12],
  [14, 'q6_K', QK_K, 2 + QK_K / 2 + QK_K / 4 + QK_K / 16],
  [15, 'q8_K', QK_K, 4 + QK_K + QK_K / 8],
  [16, 'iq2_xxs', QK_K, 2 + QK_K / 4],
  [17, 'iq2_xs', QK_K, 2 + QK_K / 4 + QK_K / 32],
  [18, 'iq3_xxs', QK_K, 2 + QK_K / 4 + QK_K / 8],
  [19, 'iq1_s', QK_K, 2 + QK_K / 8 + QK_K / 16],
  [20, 'iq4_nl', 32, 2 + 16],
  [21, 'iq3_s', QK_K, 2 + QK_K / 4 + QK_K / 8 + QK_K / 32 + 4],
  [22, 'iq2_s', QK_K, 2 + QK_K / 4 + QK_K / 16],
  [23, 'iq4_xs', QK_K, 2 + 2 + QK_K / 2 + QK_K / 64],
  [24, 'i8', 1, 1],
  [25, 'i16', 1, 2],
  [26, 'i32', 1, 4],
  [27, 'i64', 1, 8],
  [28, 'f64', 1, 8],
  [29, 'iq1_m', QK_K, QK_K / 8 + QK_K / 16 + QK_K / 32],
  [30, 'bf16', 1, 2],
  [34, 'tq1_0', QK_K, 2 + 4 * 13],
  [35, 'tq2_0', QK_K, 2 + 64],
  [39, 'mxfp4', 32, 1 + 16],
];

/** Every ggml type by id. */
export const GGML_TYPES: ReadonlyMap<number, GgmlType> = new Map(
  TYPES.map(([id, name, blockSize, blockBytes]) => [id, { id, name, blockSize, blockBytes }]),
);

/** ggml's name for a type id (`q4_K`, `f32`, `iq4_nl`), or `type N` for an id ggml does not define. */
export function ggmlTypeName(id: number): string {
  return GGML_TYPES.get(id)?.name ?? `type ${id}`;
}
