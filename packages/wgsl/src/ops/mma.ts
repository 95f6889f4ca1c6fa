import { MMA_DIMENSIONS, MMA_FRAGMENTS, MMA_SHAPES, WARP_SIZE, type MmaShape } from '@forge/ir';
import { LANE } from './warp.js';

// WGSL has no tensor cores, and its subgroups are often narrower than a warp (8 on lavapipe, 4 on
// SwiftShader): an mma publishes every lane's fragment words in workgroup memory once, and each
// lane reads the A words of its two rows and the B words of its two columns back in a loop over
// k. Two barriers an mma, where a shuffle per word would take 64 (and 30 times the shader text).

type Four<T> = [T, T, T, T];
type Five<T> = [T, T, T, T, T];

export const MMA_A_SCRATCH = 'forge_mma_a';
export const MMA_B_SCRATCH = 'forge_mma_b';
const WARP_BASE = `(local_index & 0x${(0x100000000 - WARP_SIZE).toString(16)}u)`;

// Words each invocation publishes, for every shape: one pair of arrays serves all of a module's mmas.
const A_WORDS = Math.max(...MMA_SHAPES.map((shape) => MMA_FRAGMENTS[shape].a));
const B_WORDS = Math.max(...MMA_SHAPES.map((shape) => MMA_FRAGMENTS[shape].b));

/** The workgroup arrays the mmas exchange through, for `workgroupSize` invocations. */
export function mmaScratchDeclarations(workgroupSize: number): string[] {
  return [
    `var<workgroup> ${MMA_A_SCRATCH}: array<u32, ${A_WORDS * workgroupSize}>;`,
    `var<workgroup> ${MMA_B_SCRATCH}: array<u32, ${B_WORDS * workgroupSize}>;`,
  ];
}

/** Bytes of workgroup memory the exchange needs for `workgroupSize` invocations. */
export function mmaScratchBytes(workgroupSize: number): number {
  return 4 * (A_WORDS + B_WORDS) * workgroupSize;
}

/**
 * Statements declaring `names` (f32 `var`s) as D = A·B + C, the sums in MmaStmt's order: each D
 * element starts from C and adds the K products in increasing k, each sum rounded to f32 as the
 * interpreter does (the execution tests compare bits on WebGPU). Lane
 * 4g + s holds A[g + 8(r & 1)][2s + 8(r >> 1) + h] in half h of word r, and lane 4·col + s holds
 * B[2s + 8r + h][col]; iteration j = s + 4·high covers k = 2s + 8·high and the next.
 */
export function mmaLines(
  shape: MmaShape,
  a: readonly string[],
  b: readonly string[],
  c: readonly string[],
  names: readonly string[],
  temporary: () => string,
): string[] {
  const steps = MMA_DIMENSIONS[shape].k / 2;
  const [rows, columns, passes, step, high] = [1, 2, 3, 4, 5].map(temporary) as Five<string>;
  const [rowLo, rowHi, columnLo, columnHi] = [1, 2, 3, 4].map(temporary) as Four<string>;
  const sum = (index: number, row: string, column: string): string[] => {
    const name = names[index] ?? '';
    return [
      `  ${name} = ${name} + ${row}.x * ${column}.x;`,
      `  ${name} = ${name} + ${row}.y * ${column}.y;`,
    ];
  };
  const word = (scratch: string, count: number, lane: string, index: string): string =>
    `unpack2x16float(${scratch}[${count}u * (${lane} + (${step} & 3u)) + ${index}])`;
  return [
    ...a.map((value, r) => `${MMA_A_SCRATCH}[${A_WORDS}u * local_index + ${r}u] = ${value};`),
    ...b.map((value, r) => `${MMA_B_SCRATCH}[${B_WORDS}u * local_index + ${r}u] = ${value};`),
    'workgroupBarrier();',
    ...names.map((name, i) => `var ${name}: f32 = ${c[i] ?? '0.0f'};`),
    // Lanes 4g .. 4g + 3 hold rows g and g + 8; lanes 4·col .. 4·col + 3 hold column col.
    `let ${rows}: u32 = ${WARP_BASE} + (${LANE} & 0x1cu);`,
    `let ${columns}: u32 = ${WARP_BASE} + ((${LANE} & 3u) << 3u);`,
    // A dispatch has at least one workgroup, so this is `steps`, a count no compiler can see:
    // lavapipe unrolls a constant one, and took 34 s to build a kernel of 14 mmas (3.5 s not).
    `let ${passes}: u32 = select(${steps}u, 0u, num_workgroups.x == 0u);`,
    `for (var ${step}: u32 = 0u; ${step} < ${passes}; ${step} = ${step} + 1u) {`,
    `  let ${high}: u32 = ${step} >> 2u;`,
    `  let ${rowLo} = ${word(MMA_A_SCRATCH, A_WORDS, rows, `2u * ${high}`)};`,
    `  let ${rowHi} = ${word(MMA_A_SCRATCH, A_WORDS, rows, `2u * ${high} + 1u`)};`,
    `  let ${columnLo} = ${word(MMA_B_SCRATCH, B_WORDS, columns, high)};`,
    `  let ${columnHi} = ${word(MMA_B_SCRATCH, B_WORDS, `${columns} + 4u`, high)};`,
    ...sum(0, rowLo, columnLo),
    ...sum(1, rowLo, columnHi),
    ...sum(2, rowHi, columnLo),
    ...sum(3, rowHi, columnHi),
    '}',
    // The next mma (or a loop's next round) overwrites the arrays only after every lane has read.
    'workgroupBarrier();',
  ];
}
