// Catalog kernels `rope-kv-store` (f16 cache) and `rope-kv-store-f32`: rope and kv-store in one
// launch, a decode step's attention inputs ready for sdpa-decode after one dispatch instead of two.
//
// A thread takes 4 values of a head, 2j, 2j+1, 2j+half and 2j+1+half: it reads two 8-byte pairs
// of q or k, two of the table, and on a k head two of v, all before any math (one DRAM round trip
// a trip); it writes q back in place, or rotated k and v as two cache words each (f16) or two
// 8-byte pairs (f32) into row pos. Lanes move adjacent pairs, so a warp's accesses are whole lines.
import { defineKernel, type BodyBuilder } from '../builder.js';
import { ValidationError, type ValidationIssue } from '../errors.js';
import type { Value } from '../expression-methods.js';
import { packHalf, select } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { kvStore, kvStoreF32, kvStoreReference, kvStoreShapeIssues } from './kv-store.js';
import { ROPE_SHAPE_NAMES, rope, rotateHeads, rotatePairs, ropeShapeIssues } from './rope.js';
import type { RopeField } from './rope.js';
import type { SdpaCache } from './sdpa-shape.js';
import { field, fields } from './shape-reader.js';

type Pair = readonly [Value<'f32'>, Value<'f32'>];
/** What the body reads: every buffer but the caches, whose element depends on the cache type. */
type RopeKvBuilder = BodyBuilder<{
  readonly memory: Readonly<Record<'q' | 'k' | 'v' | 'cos_sin', 'f32'>>;
  readonly params: Readonly<Record<RopeField, 'u32'>>;
}>;
/** Writes a pair of values to a cache at value index `at` (of row pos). */
type CacheWrite = (cache: 'k_cache' | 'v_cache', at: Value<'u32'>, pair: Pair) => void;

/** The declarations of the kernel of `cache`, whose caches hold `element`s. */
function declarations<E extends 'u32' | 'f32'>(cache: SdpaCache, element: E) {
  const what = cache === 'f16' ? 'f16 (two halves a u32 word, rounded to nearest even)' : 'f32';
  return {
    id: cache === 'f16' ? 'rope-kv-store' : 'rope-kv-store-f32',
    semanticVersion: 1,
    entryPoint: cache === 'f16' ? 'rope_kv_store' : 'rope_kv_store_f32',
    description: `rope of q in place and of k at position pos (pairs (2i, 2i+1), or (i, i + head_dim/2) when neox != 0, angles from cos_sin row pos), then k_cache[pos] = rotated k and v_cache[pos] = v in the ${what} cache [max_ctx][n_kv_head][head_dim] sdpa-decode reads`,
    buffers: [
      { group: 0, binding: 0, name: 'q', element: 'f32', access: 'read_write' },
      // Read only, but declared writable: WebGPU binds a buffer writable in a dispatch only where
      // every binding of it is, and a decode plan's q, k and v are ranges of one buffer.
      { group: 0, binding: 1, name: 'k', element: 'f32', access: 'read_write' },
      { group: 0, binding: 2, name: 'v', element: 'f32', access: 'read_write' },
      { group: 0, binding: 3, name: 'cos_sin', element: 'f32', access: 'read' },
      { group: 0, binding: 4, name: 'k_cache', element, access: 'read_write' },
      { group: 0, binding: 5, name: 'v_cache', element, access: 'read_write' },
    ],
    params: ROPE_SHAPE_NAMES.map((name) => ({ name, type: 'u32' as const })),
    shared: [],
    schedule: [
      {
        name: 'workgroupSize',
        description: 'threads per workgroup, each rotating 4 values of q or of k (and moving v)',
        default: 64,
        bounds: { ptx: { min: 32, max: 1024, multipleOf: 32 }, wgsl: { min: 1, max: 1024 } },
      },
    ],
    launch: {
      workgroupSize: 'workgroupSize',
      // WebGPU caps a grid dimension at 65535 workgroups, so more quads run as a grid-stride loop.
      grid: ['min(ceil_div((n_head + n_kv_head) * (head_dim / 4), workgroupSize), 65535)', '1', '1'], // prettier-ignore
    },
  } as const;
}

function spec(cache: SdpaCache): KernelSpec {
  // An f16 cache holds two halves a u32 word: a pair is one word.
  if (cache === 'f16')
    return defineKernel(declarations(cache, 'u32'), (b) =>
      body(b, (target, at, [x0, x1]) => b.store(target, at.shr(1), packHalf(x0, x1))),
    );
  return defineKernel(declarations(cache, 'f32'), (b) =>
    body(b, (target, at, pair) => b.storeVector(target, at, pair)),
  );
}

/** (x0, x1) rotated by (cos θ, sin θ), in rope's order of operations. */
const rotate = ([x0, x1]: Pair, cos: Value<'f32'>, sin: Value<'f32'>): Pair => [
  x0.mul(cos).sub(x1.mul(sin)),
  x0.mul(sin).add(x1.mul(cos)),
];

function body(b: RopeKvBuilder, write: CacheWrite): void {
  const size = b.schedule('workgroupSize');
  const headDim = b.param('head_dim');
  const [nHead, nKvHead, pos] = [b.param('n_head'), b.param('n_kv_head'), b.param('pos')];
  const { half, quarter, row, cacheRow, isNeox, stride } = b.let({
    half: headDim.shr(1),
    quarter: headDim.shr(2),
    // Row pos of the table holds head_dim/2 (cos, sin) pairs: head_dim values.
    row: pos.mul(headDim),
    // Row pos of a cache holds n_kv_head·head_dim values; checkShape keeps its bytes below 2^32.
    cacheRow: pos.mul(nKvHead.mul(headDim)),
    isNeox: b.param('neox').ne(0),
    stride: b.numWorkgroups().mul(size),
  });
  const start = b.workgroupId().mul(size).add(b.localId());
  const quads = nHead.add(nKvHead).mul(quarter);
  // A pos past the table and caches touches nothing rather than reading out of bounds.
  b.if(pos.lt(b.param('max_ctx')), () =>
    b.for('u', { start, end: quads, step: stride }, (_, u) => {
      const { head } = b.let({ head: u.div(quarter) });
      const { quad } = b.let({ quad: u.sub(head.mul(quarter)) });
      // A thread moves values 2j, 2j+1 and 2j+half, 2j+1+half: a warp's loads and stores of q, k,
      // v and the caches are contiguous in both modes. Normal mode rotates pairs j and j+half/2
      // (table entries 2j and 2j+half), NeoX pairs 2j and 2j+1 (entries 4j and 4j+2).
      const { first } = b.let({ first: quad.shl(1) });
      const { second } = b.let({ second: first.add(half) });
      const { angle } = b.let({ angle: row.add(isNeox.select(quad.shl(2), first)) });
      const [cos0, sin0] = b.loadVector('cos_sin', angle, ['cos0', 'sin0']);
      const angle1 = angle.add(select(isNeox, 2, half));
      const [cos1, sin1] = b.loadVector('cos_sin', angle1, ['cos1', 'sin1']);
      /** The quad loaded as [first pair, second pair], rotated, in that layout. */
      const rotateQuad = ([a0, a1]: Pair, [c0, c1]: Pair): [Pair, Pair] => {
        // Normal mode rotates (a0, a1) and (c0, c1); NeoX (a0, c0) and (a1, c1).
        const [x0, x1] = rotate([a0, isNeox.select(c0, a1)], cos0, sin0);
        const [y0, y1] = rotate([isNeox.select(a1, c0), c1], cos1, sin1);
        const r = b.let({ x0, x1, y0, y1 });
        return [
          [r.x0, isNeox.select(r.y0, r.x1)],
          [isNeox.select(r.x1, r.y0), r.y1],
        ];
      };
      b.if(
        head.lt(nHead),
        () => {
          const base = b.let('q_base', head.mul(headDim));
          const [a, c] = [b.let('q_first', base.add(first)), b.let('q_second', base.add(second))];
          const qa = b.loadVector('q', a, ['qa0', 'qa1']);
          const qc = b.loadVector('q', c, ['qc0', 'qc1']);
          const [ra, rc] = rotateQuad(qa, qc);
          b.storeVector('q', a, ra);
          b.storeVector('q', c, rc);
        },
        () => {
          const base = b.let('k_base', head.sub(nHead).mul(headDim));
          const [a, c] = [b.let('k_first', base.add(first)), b.let('k_second', base.add(second))];
          const ka = b.loadVector('k', a, ['ka0', 'ka1']);
          const kc = b.loadVector('k', c, ['kc0', 'kc1']);
          const va = b.loadVector('v', a, ['va0', 'va1']);
          const vc = b.loadVector('v', c, ['vc0', 'vc1']);
          const [ra, rc] = rotateQuad(ka, kc);
          write('k_cache', cacheRow.add(a), ra);
          write('k_cache', cacheRow.add(c), rc);
          write('v_cache', cacheRow.add(a), va);
          write('v_cache', cacheRow.add(c), vc);
        },
      );
    }),
  );
}

/**
 * Every problem of `shape` for rope-kv-store, one per field (rope's message first where kv-store
 * finds the same field wrong): rope's and kv-store's checks, and head_dim a multiple of 4 (a thread
 * moves two aligned pairs).
 */
export function ropeKvStoreShapeIssues(shape: Shape, cache: SdpaCache): ValidationIssue[] {
  const issues = [...ropeShapeIssues(shape), ...kvStoreShapeIssues(shape, cache)];
  const headDim = shape['head_dim'];
  if (headDim !== undefined && Number.isInteger(headDim) && headDim % 4 !== 0)
    issues.push({
      path: 'head_dim',
      message: `${headDim} is not a multiple of 4 (a thread moves two pairs)`,
    });
  return issues.filter((issue, index) => issues.findIndex((o) => o.path === issue.path) === index);
}

/**
 * The reference: q rotated in float64 with θ from pow/cos/sin, as rope's; the caches as kv-store
 * writes them from k rotated in f32 by the table's row pos, each product and sum rounded to f32
 * as the kernel does, so a cached half is the one correctly rounded value and compares exactly.
 */
function reference(cache: SdpaCache): CatalogKernel['reference'] {
  const store = kvStoreReference(cache);
  return (inputs, params) => {
    const size = fields<RopeField>(params);
    const [headDim, pos] = [size('head_dim'), size('pos')];
    const neox = size('neox') !== 0;
    const table = inputs['cos_sin'] ?? [];
    const entry = (at: number): number => Math.fround(table[pos * headDim + at] ?? 0);
    const angle = (i: number): [number, number] => [entry(2 * i), entry(2 * i + 1)];
    const heads = size('n_kv_head');
    const k = rotatePairs(inputs['k'] ?? [], heads, headDim, neox, angle, Math.fround);
    return {
      q: rotateHeads(inputs['q'] ?? [], size('n_head'), headDim, pos, neox),
      ...store({ ...inputs, k }, params),
    };
  };
}

/** The kv-store kernel of `cache`'s type. */
const kvStoreOf = (cache: SdpaCache): CatalogKernel => (cache === 'f16' ? kvStore : kvStoreF32);

function ropeKvStoreKernel(cache: SdpaCache): CatalogKernel {
  return {
    spec: spec(cache),
    shapeNames: ROPE_SHAPE_NAMES,
    defaultShape: { n_head: 32, n_kv_head: 8, head_dim: 128, pos: 37, max_ctx: 64, neox: 0 },
    params: (shape) =>
      Object.fromEntries(ROPE_SHAPE_NAMES.map((name) => [name, field(shape, name)])),
    // rope's q, k and table, kv-store's k, v and caches.
    bufferLengths: (shape) => ({
      ...rope.bufferLengths(shape),
      ...kvStoreOf(cache).bufferLengths(shape),
    }),
    outputs: ['q', 'k_cache', 'v_cache'],
    inPlace: ['q'],
    reference: reference(cache),
    // q: only the table's rounding to f32 and the f32 arithmetic differ from float64 (about 1e-14).
    tolerance: 1e-10,
    // The caches follow the kernel's f32 arithmetic exactly (f16 caches compare as words).
    outputTolerance: { k_cache: 0, v_cache: 0 },
    checkShape: (shape) => {
      const issues = ropeKvStoreShapeIssues(shape, cache);
      if (issues.length > 0) throw new ValidationError(issues);
    },
    // The table as rope generates it; the caches as kv-store describes them.
    generateInput: (request) => rope.generateInput?.(request),
    describeInput: (buffer, shape) =>
      rope.describeInput?.(buffer, shape) ?? kvStoreOf(cache).describeInput?.(buffer, shape),
  };
}

/** Catalog kernel `rope-kv-store`: rope of q and k, then k and v rounded to f16 into row pos. */
export const ropeKvStore: CatalogKernel = ropeKvStoreKernel('f16');
/** Catalog kernel `rope-kv-store-f32`: rope of q and k, then k and v into row pos of an f32 cache. */
export const ropeKvStoreF32: CatalogKernel = ropeKvStoreKernel('f32');
