// Catalog kernel `q4k-soa-wmma`: Y[c][r] = Σ_k W[r][k]·X[c][k], W repacked Q4_K, on tensor cores.
import { WARP_SIZE, type Expr } from '../body.js';
import type { Local as Var } from '../expression-methods.js';
import { defineKernel, type BodyBuilder, type DeclaredBy } from '../builder.js';
import {
  add,
  and,
  bitSelect,
  convert,
  div,
  f32,
  fma,
  gt,
  lt,
  min,
  mul,
  ne,
  neg,
  or,
  select,
  shl,
  shr,
  sub,
  u32,
  unpackHalf,
} from '../expressions.js';
import { WMMA_PARTIAL, loadWords, storeWmmaTile } from './wmma-tile.js';

// Plan. As in wmma-gemv a workgroup takes 16 rows (a tile) and its warps split K, here by pairs
// of 256-value blocks (warp w takes pairs w, w + warps, …, in workgroup-uniform rounds; a block
// past the last loads nothing and counts as zero). Per pair a lane (g = lane >> 2, t = lane % 4)
// loads meta words 2t, 2t + 1 of rows g and g + 8 (a pair's 32 meta bytes are one sector a row)
// and 8 idx shuffles hand each lane its rows' 16 meta bytes of a block; per 32-byte qs span c
// (sub-blocks 2c, 2c + 1) it loads qs words 2t, 2t + 1 of both rows (8-byte loads: the 4 lanes
// of a row read one whole sector). Latency: all of a pair's meta and qs loads (36 words a lane,
// 4.6 KB a warp) are issued before the first mma, and the runtime span loop picks a span's words
// from them by selects; column g's X comes one span ahead (a span copies it, then loads the next
// span's into its registers), column g + 8's where it is used. 8 warps a workgroup at 128
// registers: 16 warps an SM at n_out 4096.
// The mma takes raw nibbles, not dequantized weights: a nibble q OR 0x6400 is the f16 1024 + q, so
// each qs word gives four A words with 2 integer ops each (bytes 0 and 2, 1 and 3; low and high
// nibbles), and the lane's X halves are paired alike (k, k + 2) by bit selects. Every mma then
// covers one sub-block in both rows: D = Σ (1024 + q)·x, and a second mma with A = 1.0 gives the
// sub-block's S = Σ x per column. With α = d·scale and β = 1024·α + dmin·min of the row,
// Σ w·x = α·D − β·S: two fmas per D element finish the dequantization after the mma, so the
// weights never leave registers and the 6-bit scales are decoded once per row and sub-block.
// Rows past n_out load nothing (zero meta and qs words) and store nothing; lanes past
// n_cols read column n_cols − 1 and their columns are dropped.

/** Warps per workgroup (split K); 8 keeps the workgroup at 256 threads, WebGPU's default limit. */
const WARPS = { min: 1, max: 8 };
export const Q4K_WMMA_TILE_ROWS = 16;
/** Bytes of a Q4_K block: 128 of qs, 16 of meta. */
const BLOCK_BYTES = 144;
/** Two f16 1.0: the A fragment that makes the mma sum X over k. */
const ONES = 0x3c003c00;
/** Two f16 1024: OR-ed onto two nibbles at bits 0 and 16 they become 1024 + q. */
const MAGIC = 0x64006400;

const declarations = {
  id: 'q4k-soa-wmma',
  semanticVersion: 2,
  entryPoint: 'q4k_soa_wmma',
  description:
    'Y[c][r] = sum_k W[r][k] * X[c][k] for c < n_cols (1..16): W [n_out][n_in] Q4_K repacked ' +
    'structure-of-arrays (LAYOUTS.md), X f16 [n_cols][n_in] (two halves a u32 word), Y f32 ' +
    '[n_cols][n_out]; m16n8k16 mma on raw nibbles, scales and mins applied to the D fragments',
  buffers: [
    { group: 0, binding: 0, name: 'w', element: 'u32', access: 'read' },
    { group: 0, binding: 1, name: 'x', element: 'u32', access: 'read' },
    { group: 0, binding: 2, name: 'y', element: 'f32', access: 'read_write' },
  ],
  params: [
    { name: 'n_cols', type: 'u32' },
    { name: 'n_out', type: 'u32' },
    { name: 'n_in', type: 'u32' },
  ],
  shared: [WMMA_PARTIAL],
  schedule: [
    {
      name: 'warps',
      description:
        'warps per workgroup, splitting K (interleaved Q4_K blocks) over one 16-row tile',
      default: 8,
      bounds: { ptx: WARPS, wgsl: WARPS },
    },
  ],
  launch: {
    workgroupSize: `warps * ${WARP_SIZE}`,
    // Two workgroups of 8 warps an SM: a round's 32 qs words a lane fit (ptxas takes 134 uncapped).
    maxRegisters: '128',
    grid: [`min(ceil_div(n_out, ${Q4K_WMMA_TILE_ROWS}), 65535)`, '1', '1'],
  },
} as const; // checked by defineKernel

type QBuilder = BodyBuilder<DeclaredBy<typeof declarations>>;
type Four<T> = [T, T, T, T];

/** The lane's fixed state. */
interface Lanes {
  readonly fresh: (prefix: string) => string;
  readonly warp: Var<'u32'>;
  readonly t2: Var<'u32'>;
  /** X word of column g (g + 8) at the lane's 4t offset in a block's first span. */
  readonly xLo: Var<'u32'>;
  readonly xHi: Var<'u32'>;
  readonly two: Var<'bool'>;
  /** 0 and two f16 1.0, named once: mma operands are registers, so a literal costs a mov each use. */
  readonly zero: Var<'f32'>;
  readonly ones: Var<'u32'>;
}

/** Where a block's words are for the lane's rows g and g + 8, and whether each load may happen. */
interface BlockRows {
  /**
   * The round's qs words (loaded before its first mma): [block of the pair][span][row g, g + 8]
   * holds the lane's words 2t, 2t + 1 of that span (zero for an absent block or row).
   */
  readonly qs: readonly (readonly (readonly (readonly Var<'u32'>[])[])[])[];
  /** Whether this is the pair's second block (workgroup-uniform). */
  readonly second: Var<'bool'>;
  /** The 4 meta words of the block in rows g and g + 8 (zero where absent). */
  readonly meta: [Four<Var<'u32'>>, Four<Var<'u32'>>];
  /**
   * The lane's column-g X words of the next span (4 at each of its two 16-value halves): a span
   * copies them, then loads the following span's into them, so X arrives one span ahead.
   */
  readonly x: readonly Var<'u32'>[];
  /** X word `words` after this block's first (past its last span: the next block's), clamped. */
  readonly xOfSpan: (words: Expr<'u32'>) => Expr<'u32'>;
}

/** f16 pairs (k, k + 2) and (k + 1, k + 3) of four consecutive halves in words w0, w1. */
function pairX(
  b: QBuilder,
  lanes: Lanes,
  w0: Var<'u32'>,
  w1: Var<'u32'>,
): [Var<'u32'>, Var<'u32'>] {
  const prefix = lanes.fresh('xp');
  return [
    b.let(`${prefix}e`, bitSelect(0xffff, w0, shl(w1, 16))),
    b.let(`${prefix}o`, bitSelect(0xffff, shr(w0, 16), w1)),
  ];
}

/**
 * A row's 8 scales and 8 mins of a block as bytes, all at once (ggml's get_scale_min_k4, four
 * sub-blocks a word): [sub-blocks 0-3, 4-7] of each. Meta bytes 0-3 hold scales 0-3 (low 6 bits)
 * and the top 2 bits of scales 4-7, bytes 4-7 the same for mins, bytes 8-11 the low nibbles of
 * scales 4-7 and, in their high nibbles, of mins 4-7.
 */
function unpackScales(b: QBuilder, lanes: Lanes, meta: Four<Var<'u32'>>): RowScales {
  const [, m1, m2, m3] = meta;
  const p = lanes.fresh('sc');
  return {
    scales: [
      b.let(`${p}s0`, and(m1, 0x3f3f3f3f)),
      b.let(`${p}s1`, or(and(m3, 0x0f0f0f0f), and(shr(m1, 2), 0x30303030))),
    ],
    mins: [
      b.let(`${p}m0`, and(m2, 0x3f3f3f3f)),
      b.let(`${p}m1`, or(and(shr(m3, 4), 0x0f0f0f0f), and(shr(m2, 2), 0x30303030))),
    ],
  };
}

/** A row's scale and min bytes of a block, four sub-blocks a word (see unpackScales). */
interface RowScales {
  readonly scales: readonly [Var<'u32'>, Var<'u32'>];
  readonly mins: readonly [Var<'u32'>, Var<'u32'>];
}

/** α and −β of a row's sub-block from the span's scale and min words (d·scale, 1024·α + dmin·min). */
function scaleMin(
  b: QBuilder,
  lanes: Lanes,
  [scales, mins]: readonly [Var<'u32'>, Var<'u32'>],
  [d, dmin]: readonly [Var<'f32'>, Var<'f32'>],
  shift: Var<'u32'>,
): [Var<'f32'>, Var<'f32'>] {
  const byte = (word: Var<'u32'>) => convert('f32', and(shr(word, shift), 0xff));
  const prefix = lanes.fresh('sm');
  const alpha = b.let(`${prefix}a`, mul(d, byte(scales)));
  // −β, so the D update is two fmas; dmin is stored negated.
  const beta = b.let(`${prefix}b`, fma(alpha, -1024, mul(dmin, byte(mins))));
  return [alpha, beta];
}

/** Two chained mmas from zero: D of A words a0..a3 (both k halves) against B pairs. */
function mmaPair(
  b: QBuilder,
  lanes: Lanes,
  a: readonly [Four<Expr<'u32'>>, Four<Expr<'u32'>>],
  x: readonly [readonly [Expr<'u32'>, Expr<'u32'>], readonly [Expr<'u32'>, Expr<'u32'>]],
): Four<Var<'f32'>> {
  const zero = lanes.zero;
  const first = b.mma(
    'm16n8k16',
    ['p', 'q', 'r', 's'].map((s) => lanes.fresh(`d${s}`)) as Four<string>,
    { a: a[0], b: [x[0][0], x[0][1]], c: [zero, zero, zero, zero] },
  );
  return b.mma('m16n8k16', ['p', 'q', 'r', 's'].map((s) => lanes.fresh(`e${s}`)) as Four<string>, {
    a: a[1],
    b: [x[1][0], x[1][1]],
    c: first as Four<Var<'f32'>>,
  }) as Four<Var<'f32'>>;
}

/**
 * Loads the lane's column-g X words of the span at X word `at` (a span's first value; xLo holds
 * the lane's offset) into `into`: 4 words at each of the span's two 16-value halves.
 */
function loadSpanX(b: QBuilder, lanes: Lanes, at: Expr<'u32'>, into: readonly Var<'u32'>[]): void {
  const start = b.let(lanes.fresh('x_start'), add(lanes.xLo, at));
  [0, 16].forEach((offset, part) => {
    const index = offset === 0 ? start : add(start, offset);
    const loaded = loadWords(b, lanes.fresh, 'x', index, 4, undefined);
    loaded.forEach((word, k) => b.assign(into[4 * part + k]!, word));
  });
}

/** One block's contribution into the accumulators. */
function blockStep(b: QBuilder, lanes: Lanes, rows: BlockRows, acc: readonly Var<'f32'>[]): void {
  const [metaLo, metaHi] = rows.meta;
  // d and −dmin of both rows: zero for absent rows and blocks, whose meta words are zero.
  const [dLo, dHi] = [metaLo, metaHi].map((meta) => {
    const p = lanes.fresh('dd');
    return [
      b.let(`${p}d`, unpackHalf(meta[0], 0)),
      b.let(`${p}m`, neg(unpackHalf(meta[0], 1))),
    ] as const;
  }) as [readonly [Var<'f32'>, Var<'f32'>], readonly [Var<'f32'>, Var<'f32'>]];
  const [scalesLo, scalesHi] = [metaLo, metaHi].map((meta) => unpackScales(b, lanes, meta));
  // A runtime loop over the block's 4 qs spans keeps both shaders small (16 mmas a pass); a
  // span's words are picked from the round's registers by selects on the block and span.
  b.for('span', { start: 0, end: u32(4) }, (b, c) => {
    const { low, odd, spanShift } = b.let({
      low: lt(c, 2),
      odd: ne(and(c, 1), 0),
      spanShift: mul(and(c, 1), 16),
    });
    // Sub-blocks 2c and 2c + 1 are bytes 2(c & 1) and 2(c & 1) + 1 of the scale and min words.
    const pick = (row: RowScales, p: string): readonly [Var<'u32'>, Var<'u32'>] => [
      b.let(`${p}s`, select(low, row.scales[0], row.scales[1])),
      b.let(`${p}m`, select(low, row.mins[0], row.mins[1])),
    ];
    const spanScales = [pick(scalesLo!, lanes.fresh('span_lo')), pick(scalesHi!, lanes.fresh('span_hi'))] as const; // prettier-ignore
    // Column g's X of this span (loaded during the last span's mmas), then the next span's, in
    // flight during this one's; column g + 8's (n_cols > 8) is loaded where it is used.
    const now = rows.x.map((word): Var<'u32'> => b.let(lanes.fresh('x_now'), word));
    const spanAt = b.let(lanes.fresh('span_x'), rows.xOfSpan(mul(c, 32)));
    loadSpanX(b, lanes, rows.xOfSpan(mul(add(c, 1), 32)), rows.x);
    const qsWord = (row: number, k: number) => {
      const [first, second] = rows.qs.map((spans) => {
        const word = (span: number) => spans[span]![row]![k]!;
        return select(low, select(odd, word(1), word(0)), select(odd, word(3), word(2)));
      });
      return b.let(lanes.fresh('q'), select(rows.second, second!, first!));
    };
    const words = [0, 1].map((row) => [qsWord(row, 0), qsWord(row, 1)]);
    spanStep(b, lanes, { words, scales: spanScales, d: [dLo, dHi], x: now, spanAt, shift: spanShift }, acc); // prettier-ignore
  });
}

/** What one span's mmas take: the lane's qs words, its rows' scale words and d, X and the byte shift. */
interface SpanInputs {
  /** [row g, g + 8][word 2t, 2t + 1] of the span. */
  readonly words: readonly (readonly Var<'u32'>[])[];
  readonly scales: readonly (readonly [Var<'u32'>, Var<'u32'>])[];
  readonly d: readonly (readonly [Var<'f32'>, Var<'f32'>])[];
  /** Column g's X words of the span; column g + 8's are at X word `spanAt` (xHi's offset on). */
  readonly x: readonly Var<'u32'>[];
  readonly spanAt: Var<'u32'>;
  /** 16 for an odd span (0 for an even one): its sub-blocks' bytes are the words' upper two. */
  readonly shift: Var<'u32'>;
}

/** One span (sub-blocks 2c and 2c + 1, both rows) into the accumulators: 8 mmas (16 for two). */
function spanStep(
  b: QBuilder,
  lanes: Lanes,
  { words, scales, d, x: xWords, spanAt, shift: spanShift }: SpanInputs,
  acc: readonly Var<'f32'>[],
): void {
  const [lo, hi] = words as [readonly Var<'u32'>[], readonly Var<'u32'>[]];
  const ones: Four<Expr<'u32'>> = [lanes.ones, lanes.ones, lanes.ones, lanes.ones];
  for (let high = 0; high < 2; high++) {
    const shift = high === 0 ? spanShift : b.let(lanes.fresh('shift'), add(spanShift, 8));
    // A words: nibbles of bytes (0, 2) and (1, 3) of each qs word, as 1024 + q.
    const nib = (word: Var<'u32'>, byte: number) => {
      const base = 4 * high + byte;
      return b.let(
        lanes.fresh('a'),
        // MAGIC has no bit under the nibble mask: one lop3 makes (word & mask) | MAGIC.
        bitSelect(0x000f000f, base === 0 ? word : shr(word, base), MAGIC),
      );
    };
    const a = (k: number): Four<Expr<'u32'>> => [
      nib(lo[k]!, 0),
      nib(hi[k]!, 0),
      nib(lo[k]!, 8),
      nib(hi[k]!, 8),
    ];
    const aWords = [a(0), a(1)] as const;
    const [alphaLo, betaLo] = scaleMin(b, lanes, scales[0]!, d[0]!, shift);
    const [alphaHi, betaHi] = scaleMin(b, lanes, scales[1]!, d[1]!, shift);
    const columns = (bb: QBuilder, xw: readonly Var<'u32'>[], first: number) => {
      const x = [pairX(bb, lanes, xw[0]!, xw[1]!), pairX(bb, lanes, xw[2]!, xw[3]!)] as const;
      const dd = mmaPair(bb, lanes, aWords, x);
      const sums = mmaPair(bb, lanes, [ones, ones], x);
      // dd[i] is row g + 8·(i >> 1), column 2t + (i & 1); sums[i & 1] that column's Σ x.
      for (let i = 0; i < 4; i++) {
        const [alpha, beta] = i < 2 ? [alphaLo, betaLo] : [alphaHi, betaHi];
        const local = acc[first + i]!;
        bb.assign(local, fma(alpha, dd[i]!, fma(beta, sums[i & 1]!, local)));
      }
    };
    columns(b, xWords.slice(4 * high, 4 * high + 4), 0);
    b.if(lanes.two, (second) => {
      const at = add(lanes.xHi, add(spanAt, 16 * high));
      columns(second, loadWords(second, lanes.fresh, 'x', at, 4, undefined), 4);
    });
  }
}

function body(b: QBuilder): void {
  let unique = 0;
  const fresh = (prefix: string): string => `${prefix}${unique++}`;
  const [nCols, nOut, nIn] = [b.param('n_cols'), b.param('n_out'), b.param('n_in')];
  const warps = b.schedule('warps');
  const lane = b.laneId();
  const { warp, rowWords, t, g, blocks } = b.let({
    warp: b.warpId(),
    rowWords: shr(nIn, 1),
    t: and(lane, 3),
    g: shr(lane, 2),
    blocks: shr(nIn, 8),
  });
  // Repacked rows are 32·⌈144·nb/32⌉ bytes: 36·nb words, 4 more for odd nb.
  const { strideWords, metaStart, t2, lastCol, lastSpan } = b.let({
    strideWords: add(mul(blocks, 36), mul(and(blocks, 1), 4)),
    metaStart: mul(blocks, 32),
    t2: mul(t, 2),
    lastCol: sub(nCols, 1),
    lastSpan: sub(mul(blocks, 128), 32),
  });
  const { xLo, xHi, two } = b.let({
    xLo: add(mul(min(g, lastCol), rowWords), mul(t, 4)),
    xHi: add(mul(min(add(g, 8), lastCol), rowWords), mul(t, 4)),
    two: gt(nCols, 8),
  });
  const { zero, ones } = b.let({ zero: f32(0), ones: u32(ONES) });
  const lanes: Lanes = { fresh, warp, t2, xLo, xHi, two, zero, ones };
  const { tiles, rounds } = b.let({
    tiles: div(add(nOut, Q4K_WMMA_TILE_ROWS - 1), Q4K_WMMA_TILE_ROWS),
    // Rounds of block pairs: the 32 meta bytes of a pair are one sector of each row.
    rounds: div(add(shr(add(blocks, 1), 1), sub(warps, 1)), warps),
  });
  const { metaLane } = b.let({ metaLane: add(metaStart, t2) });
  const range = { start: b.workgroupId('x'), end: tiles, step: b.numWorkgroups('x') };
  b.for('tile', range, (tb, tileIndex) => {
    const { firstRow } = tb.let({ firstRow: mul(tileIndex, Q4K_WMMA_TILE_ROWS) });
    const { rowLo, rowHi } = tb.let({ rowLo: add(firstRow, g), rowHi: add(firstRow, add(g, 8)) });
    const { startLo, startHi, liveLo, liveHi } = tb.let({
      startLo: mul(rowLo, strideWords),
      startHi: mul(rowHi, strideWords),
      liveLo: lt(rowLo, nOut),
      liveHi: lt(rowHi, nOut),
    });
    const acc = Array.from({ length: 8 }, (_, i) => tb.let(`acc${i}`, f32(0)));
    tb.for('round', { start: 0, end: rounds }, (loop, round) => {
      const { pair } = loop.let({ pair: add(mul(round, warps), warp) });
      const { first } = loop.let({ first: mul(pair, 2) });
      // Lane t loads meta words 2t, 2t + 1 of the pair (block first + t / 2) in both rows: one whole
      // sector a row, whose second half is the row's zero padding when the block count is odd (d = 0
      // there). The row's 4 lanes then hand its two blocks' 16 bytes round by shuffles.
      const { mine } = loop.let({ mine: lt(first, blocks) });
      const { metaAt } = loop.let({ metaAt: add(metaLane, mul(first, 4)) });
      const parts = [
        loadWords(loop, lanes.fresh, 'w', add(startLo, metaAt), 2, and(mine, liveLo)),
        loadWords(loop, lanes.fresh, 'w', add(startHi, metaAt), 2, and(mine, liveHi)),
      ];
      // Then both blocks' qs, 4 spans of 2 words in each row: every load of the round is in flight
      // before its first use (zero for an absent block or row).
      const rowStarts = [
        { start: startLo, live: liveLo },
        { start: startHi, live: liveHi },
      ];
      const qs = [0, 1].map((j) => {
        const exists = loop.let(lanes.fresh('exists'), lt(add(first, j), blocks));
        const words = loop.let(lanes.fresh('qs'), add(mul(add(first, j), 32), t2));
        return [0, 1, 2, 3].map((c) =>
          rowStarts.map(({ start, live }) =>
            loadWords(loop, lanes.fresh, 'w', add(start, add(words, c * 8)), 2, and(exists, live)),
          ),
        );
      });
      // Column g's X of the next span, loaded one span ahead (here the pair's first); a span past
      // the last block's reads the last span again (its block's zero meta makes it count nothing).
      const { pairX } = loop.let({ pairX: mul(first, 128) });
      const x = Array.from({ length: 8 }, () => loop.let(lanes.fresh('x_next'), u32(0)));
      loadSpanX(loop, lanes, min(pairX, lastSpan), x);
      // A runtime loop over the pair's 2 blocks, for the same reason as the spans'.
      loop.for('half', { start: 0, end: 2 }, (loop, j) => {
        const meta = parts.map((part) => {
          const words = [0, 1, 2, 3].map((word) =>
            loop.shuffle(
              'idx',
              lanes.fresh('meta'),
              part[word & 1]!,
              add(mul(g, 4), add(mul(j, 2), word >> 1)),
            ),
          );
          return words as Four<Var<'u32'>>;
        }) as [Four<Var<'u32'>>, Four<Var<'u32'>>];
        const p = lanes.fresh('blk');
        const blockX = loop.let(`${p}x`, add(pairX, mul(j, 128)));
        const rows: BlockRows = {
          qs,
          second: loop.let(`${p}second`, ne(j, 0)),
          meta,
          x,
          xOfSpan: (words) => min(add(blockX, words), lastSpan),
        };
        blockStep(loop, lanes, rows, acc);
      });
    });
    storeWmmaTile(tb, lanes.warp, lanes.t2, acc, firstRow);
  });
}

/** The `q4k-soa-wmma` spec. */
export const Q4K_SOA_WMMA_SPEC = defineKernel(declarations, body);

/** Bytes per Q4_K block, exported for the catalog's layout arithmetic. */
export const Q4K_WMMA_BLOCK_BYTES = BLOCK_BYTES;
