import { defineKernel, f16Bits, f16FromBits, ir } from '@forge/ir';

/**
 * Test data, a probe kernel every engine's mma test runs. Each warp takes one tile: A (16 × K f16,
 * row-major), B (K × 8 f16, each column's K values contiguous), C and D (16 × 8 f32, row-major),
 * K = 16·k_chunks, two tiles per workgroup of 64. Each lane loads its fragments straight from the
 * matrices by the layout MmaStmt documents, runs one mma per 16 k, the result of each the C of the
 * next, and stores its D elements back in place: any layout mistake, on any engine, shows.
 */
export const MMA_PROBE = defineKernel(
  {
    id: 'mma-probe',
    semanticVersion: 1,
    entryPoint: 'mma_probe',
    description: 'per warp tile: D = A*B + C through m16n8k16 mma fragments, K = 16*k_chunks',
    buffers: [
      { group: 0, binding: 0, name: 'a', element: 'u32', access: 'read' },
      { group: 0, binding: 1, name: 'b', element: 'u32', access: 'read' },
      { group: 0, binding: 2, name: 'c', element: 'f32', access: 'read' },
      { group: 0, binding: 3, name: 'd', element: 'f32', access: 'read_write' },
    ],
    params: [
      { name: 'k_chunks', type: 'u32' },
      { name: 'pairs', type: 'u32' },
    ],
    shared: [],
    schedule: [],
    launch: { workgroupSize: '64', grid: ['pairs', '1', '1'] },
  },
  (b) => {
    const lane = b.laneId();
    const { g, t, tile } = b.let({
      g: ir.shr(lane, 2),
      t: ir.and(lane, 3),
      tile: ir.add(ir.mul(b.workgroupId('x'), 2), b.warpId()),
    });
    // Words of two halves per A row and per B column.
    const { kWords } = b.let({ kWords: ir.mul(b.param('k_chunks'), 8) });
    const { rowLo, col, cAt } = b.let({
      rowLo: ir.add(ir.mul(ir.add(ir.mul(tile, 16), g), kWords), t),
      col: ir.add(ir.mul(ir.add(ir.mul(tile, 8), g), kWords), t),
      cAt: ir.add(ir.add(ir.mul(tile, 128), ir.mul(g, 8)), ir.mul(t, 2)),
    });
    const { rowHi } = b.let({ rowHi: ir.add(rowLo, ir.mul(kWords, 8)) });
    const [c0, c1] = b.loadVector('c', cAt, ['c0', 'c1']);
    const [c2, c3] = b.loadVector('c', ir.add(cAt, 64), ['c2', 'c3']);
    const acc = [
      b.let('acc0', c0),
      b.let('acc1', c1),
      b.let('acc2', c2),
      b.let('acc3', c3),
    ] as const;
    b.for('chunk', { start: 0, end: b.param('k_chunks') }, (loop, chunk) => {
      const { off } = loop.let({ off: ir.mul(chunk, 8) });
      const word = (base: typeof rowLo, plus: number) => loop.load('a', ir.add(ir.add(base, off), plus)); // prettier-ignore
      const column = (plus: number) => loop.load('b', ir.add(ir.add(col, off), plus));
      const d = loop.mma('m16n8k16', ['d0', 'd1', 'd2', 'd3'], {
        a: [word(rowLo, 0), word(rowHi, 0), word(rowLo, 4), word(rowHi, 4)],
        b: [column(0), column(4)],
        c: acc,
      });
      acc.forEach((local, i) => loop.assign(local, d[i] as typeof local));
    });
    b.storeVector('d', cAt, [acc[0], acc[1]]);
    b.storeVector('d', ir.add(cAt, 64), [acc[2], acc[3]]);
  },
);

/** A deterministic f16 in ±2 (some exact zeros, small and subnormal values), as its bits. */
function probeHalf(index: number, seed: number): number {
  const x = Math.sin(index * 12.9898 + seed * 78.233) * 43758.5453;
  const unit = x - Math.floor(x);
  if (index % 37 === 5) return 0;
  if (index % 53 === 7) return f16Bits(unit * 2 ** -20); // a subnormal half
  return f16Bits((unit * 4 - 2) * (index % 11 === 3 ? 2 ** -9 : 1));
}

/**
 * Test data: MMA_PROBE's inputs for `pairs` workgroups (2 tiles each) and `kChunks`, and the
 * float64 D = A·B + C on the same f16 values every engine is compared with.
 */
export function mmaProbeCase(
  pairs: number,
  kChunks: number,
): { a: Uint32Array; b: Uint32Array; c: Float32Array; reference: Float64Array } {
  const tiles = 2 * pairs;
  const k = 16 * kChunks;
  const halves = (count: number, seed: number): Uint16Array =>
    Uint16Array.from({ length: count }, (_, i) => probeHalf(i, seed));
  const aHalves = halves(tiles * 16 * k, 1);
  const bHalves = halves(tiles * 8 * k, 2);
  const c = Float32Array.from({ length: tiles * 128 }, (_, i) => Math.sin(i * 0.37) * 3);
  const reference = new Float64Array(tiles * 128);
  for (let tile = 0; tile < tiles; tile++)
    for (let row = 0; row < 16; row++)
      for (let n = 0; n < 8; n++) {
        let sum = c[tile * 128 + row * 8 + n] as number;
        for (let kk = 0; kk < k; kk++)
          sum +=
            f16FromBits(aHalves[(tile * 16 + row) * k + kk] as number) *
            f16FromBits(bHalves[(tile * 8 + n) * k + kk] as number);
        reference[tile * 128 + row * 8 + n] = sum;
      }
  const words = (h: Uint16Array): Uint32Array => new Uint32Array(h.buffer.slice(0));
  return { a: words(aHalves), b: words(bHalves), c, reference };
}
