// Catalog kernels `rope-kv-store` (f16 cache) and `rope-kv-store-f32`: rope and kv-store in one
// launch, a decode step's attention inputs ready for sdpa-decode after one dispatch instead of two.
//
// A thread takes 4 values of a head, 2j, 2j+1, 2j+half and 2j+1+half: it reads two 8-byte pairs
// of q or k, two of the table, and on a k head two of v, all before any math (one DRAM round trip
// a trip); it writes q back in place, or rotated k and v as two cache words each (f16) or two
// 8-byte pairs (f32) into row pos. Lanes move adjacent pairs, so a warp's accesses are whole lines.
import type { Expr } from '../body.js';
import { defineKernel, type BodyBuilder, type Declared } from '../builder.js';
import { ValidationError, type ValidationIssue } from '../errors.js';
import { add, div, lt, mul, ne, packHalf, select, shl, shr, sub } from '../expressions.js';
import type { KernelSpec } from '../spec.js';
import type { CatalogKernel, Shape } from './catalog-kernel.js';
import { kvStore, kvStoreF32, kvStoreReference, kvStoreShapeIssues } from './kv-store.js';
import { ROPE_SHAPE_NAMES, rope, rotateHeads, rotatePairs, ropeShapeIssues } from './rope.js';
import type { SdpaCache } from './sdpa-shape.js';

type Builder = BodyBuilder<Declared>;
type Pair = readonly [Expr<'f32'>, Expr<'f32'>];
type Angle = readonly Expr<'f32'>[] & readonly [Expr<'f32'>, Expr<'f32'>];

function spec(cache: SdpaCache): KernelSpec {
  const cached = cache === 'f16' ? 'u32' : 'f32';
  const what = cache === 'f16' ? 'f16 (two halves a u32 word, rounded to nearest even)' : 'f32';
  return defineKernel(
    {
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
        { group: 0, binding: 4, name: 'k_cache', element: cached, access: 'read_write' },
        { group: 0, binding: 5, name: 'v_cache', element: cached, access: 'read_write' },
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
    },
    (b) => body(b as unknown as Builder, cache),
  );
}

/** (x0, x1) rotated by (cos θ, sin θ), in rope's order of operations. */
function rotate([x0, x1]: Pair, cos: Expr<'f32'>, sin: Expr<'f32'>): Pair {
  return [sub(mul(x0, cos), mul(x1, sin)), add(mul(x0, sin), mul(x1, cos))];
}

function body(b: Builder, cache: SdpaCache): void {
  const param = (name: (typeof ROPE_SHAPE_NAMES)[number]): Expr<'u32'> =>
    b.param(name) as Expr<'u32'>;
  const [size, headDim, nHead] = [b.schedule('workgroupSize'), param('head_dim'), param('n_head')];
  const { half, quarter, row, cacheRow, isNeox, stride } = b.let({
    half: shr(headDim, 1),
    quarter: shr(headDim, 2),
    // Row pos of the table holds head_dim/2 (cos, sin) pairs: head_dim values.
    row: mul(param('pos'), headDim),
    // Row pos of a cache holds n_kv_head·head_dim values; checkShape keeps its bytes below 2^32.
    cacheRow: mul(param('pos'), mul(param('n_kv_head'), headDim)),
    isNeox: ne(param('neox'), 0),
    stride: mul(b.numWorkgroups('x'), size),
  });
  const start = add(mul(b.workgroupId('x'), size), b.localId());
  const quads = mul(add(nHead, param('n_kv_head')), quarter);
  // A pos past the table and caches touches nothing rather than reading out of bounds.
  b.if(lt(param('pos'), param('max_ctx')), (inside) =>
    inside.for('u', { start, end: quads, step: stride }, (loop, u) => {
      const { head } = loop.let({ head: div(u, quarter) });
      const { quad } = loop.let({ quad: sub(u, mul(head, quarter)) });
      // A thread moves values 2j, 2j+1 and 2j+half, 2j+1+half: a warp's loads and stores of q, k,
      // v and the caches are contiguous in both modes. Normal mode rotates pairs j and j+half/2
      // (table entries 2j and 2j+half), NeoX pairs 2j and 2j+1 (entries 4j and 4j+2).
      const { first } = loop.let({ first: shl(quad, 1) });
      const { second } = loop.let({ second: add(first, half) });
      const { angle } = loop.let({ angle: add(row, select(isNeox, shl(quad, 2), first)) });
      const [cos0, sin0] = loop.loadVector('cos_sin', angle, ['cos0', 'sin0']) as Angle;
      const angle1 = add(angle, select(isNeox, 2, half));
      const [cos1, sin1] = loop.loadVector('cos_sin', angle1, ['cos1', 'sin1']) as Angle;
      /** The 4 values of `buffer` loaded as [first pair, second pair], rotated, in that layout. */
      const rotateQuad = (block: Builder, buffer: 'q' | 'k', a: Pair, c: Pair): [Pair, Pair] => {
        // Normal mode rotates (a0, a1) and (c0, c1); NeoX (a0, c0) and (a1, c1).
        const named = (pair: Pair, name: string): Pair => [
          block.let(`${buffer}_${name}0`, pair[0]),
          block.let(`${buffer}_${name}1`, pair[1]),
        ];
        const [x0, x1] = named(rotate([a[0], select(isNeox, c[0], a[1])], cos0, sin0), 'r');
        const [y0, y1] = named(rotate([select(isNeox, a[1], c[0]), c[1]], cos1, sin1), 's');
        return [
          [x0, select(isNeox, y0, x1)],
          [select(isNeox, x1, y0), y1],
        ];
      };
      loop.if(
        lt(head, nHead),
        (block) => {
          const { qBase: base } = block.let({ qBase: mul(head, headDim) });
          const { qFirst: a, qSecond: c } = block.let({
            qFirst: add(base, first),
            qSecond: add(base, second),
          });
          const qa = block.loadVector('q', a, ['qa0', 'qa1']) as Pair;
          const qc = block.loadVector('q', c, ['qc0', 'qc1']) as Pair;
          const [ra, rc] = rotateQuad(block, 'q', qa, qc);
          block.storeVector('q', a, ra);
          block.storeVector('q', c, rc);
        },
        (block) => {
          const { kBase: base } = block.let({ kBase: mul(sub(head, nHead), headDim) });
          const { kFirst: a, kSecond: c } = block.let({
            kFirst: add(base, first),
            kSecond: add(base, second),
          });
          const ka = block.loadVector('k', a, ['ka0', 'ka1']) as Pair;
          const kc = block.loadVector('k', c, ['kc0', 'kc1']) as Pair;
          const va = block.loadVector('v', a, ['va0', 'va1']) as Pair;
          const vc = block.loadVector('v', c, ['vc0', 'vc1']) as Pair;
          const [ra, rc] = rotateQuad(block, 'k', ka, kc);
          for (const [target, index, values] of [
            ['k_cache', a, ra],
            ['k_cache', c, rc],
            ['v_cache', a, va],
            ['v_cache', c, vc],
          ] as const) {
            const at = add(cacheRow, index);
            if (cache === 'f16') block.store(target, shr(at, 1), packHalf(values[0], values[1]));
            else block.storeVector(target, at, values);
          }
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
    const size = (name: string): number => params[name] ?? 0;
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
    params: (shape) => Object.fromEntries(ROPE_SHAPE_NAMES.map((name) => [name, shape[name] ?? 0])),
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
