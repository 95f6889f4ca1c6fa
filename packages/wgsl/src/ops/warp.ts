import { WARP_SIZE, type Reduction, type ScalarType, type ShuffleMode } from '@forge/ir';

// The IR's warp is 32 consecutive local ids. WGSL subgroups vary in size (8 on lavapipe, 32 on
// NVIDIA, 64 on AMD), so warp operations exchange values through workgroup memory, using
// subgroupShuffleXor only for xor offsets inside the hardware subgroup.

export const WARP_SCRATCH = 'forge_warp_scratch';
export const LANE = `(local_index % ${WARP_SIZE}u)`;
const WARP_BASE = `(local_index & 0x${(0x100000000 - WARP_SIZE).toString(16)}u)`;

const toBits = (type: ScalarType, value: string): string =>
  type === 'u32' ? value : `bitcast<u32>(${value})`;
const fromBits = (type: ScalarType, bits: string): string =>
  type === 'u32' ? bits : `bitcast<${type}>(${bits})`;

/** The lane to read for each shuffle mode; a result of 32 or more means "keep your own value". */
export function shuffleSourceLane(mode: ShuffleMode, argument: string): string {
  switch (mode) {
    case 'xor':
      return `(${LANE} ^ ${argument})`;
    case 'down':
      return `select(${WARP_SIZE}u, ${LANE} + ${argument}, ${argument} < ${WARP_SIZE}u)`;
    case 'up':
      return `select(${WARP_SIZE}u, ${LANE} - ${argument}, ${argument} <= ${LANE})`;
    case 'idx':
      return argument;
  }
}

/** Statements that publish `value` to the warp and declare `result` as the source lane's value. */
export function shuffleLines(
  type: ScalarType,
  value: string,
  sourceLane: string,
  result: string,
  temporary: () => string,
): string[] {
  const own = temporary();
  const source = temporary();
  return [
    `let ${own}: ${type} = ${value};`,
    `${WARP_SCRATCH}[local_index] = ${toBits(type, own)};`,
    'workgroupBarrier();',
    `let ${source}: u32 = ${sourceLane};`,
    `var ${result}: ${type} = ${own};`,
    `if (${source} < ${WARP_SIZE}u) {`,
    `  ${result} = ${fromBits(type, `${WARP_SCRATCH}[${WARP_BASE} + ${source}]`)};`,
    '}',
    'workgroupBarrier();',
  ];
}

const COMBINE: Readonly<Record<Reduction, (a: string, b: string) => string>> = {
  add: (a, b) => `(${a} + ${b})`,
  min: (a, b) => `min(${a}, ${b})`,
  max: (a, b) => `max(${a}, ${b})`,
};

/**
 * A butterfly over xor offsets 16, 8, 4, 2, 1 into `result` (declared by the caller), the order
 * the IR defines; with subgroups, offsets below the subgroup size use subgroupShuffleXor.
 */
export function reduceLines(
  type: ScalarType,
  reduction: Reduction,
  result: string,
  subgroups: boolean,
  temporary: () => string,
): string[] {
  const lines: string[] = [];
  for (let offset = WARP_SIZE / 2; offset >= 1; offset /= 2) {
    const partner = temporary();
    const exchange = [
      `${WARP_SCRATCH}[local_index] = ${toBits(type, result)};`,
      'workgroupBarrier();',
      `let ${partner} = ${fromBits(type, `${WARP_SCRATCH}[local_index ^ ${offset}u]`)};`,
      'workgroupBarrier();',
      `${result} = ${COMBINE[reduction](result, partner)};`,
    ];
    if (!subgroups) {
      lines.push(...exchange);
      continue;
    }
    lines.push(
      `if (${offset}u < subgroup_size) {`,
      `  ${result} = ${COMBINE[reduction](result, `subgroupShuffleXor(${result}, ${offset}u)`)};`,
      '} else {',
      ...exchange.map((line) => `  ${line}`),
      '}',
    );
  }
  return lines;
}
