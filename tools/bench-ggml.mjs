// llama.cpp's own kernels as reference lines in `pnpm bench`: ggml's PTX (tools/ggml-ptx.sh writes it
// outside the repository) parsed and launched on @forge/ptx-sim as llama.cpp's host code launches
// it (ggml-cuda/mmvq.cu, quantize.cu, fattn-vec.cuh, fattn-common.cuh at the commit SOURCE names),
// on the same bytes as Forge's bench, timed per GPU on that GPU's arch's PTX.
// Standalone: node tools/bench-ggml.mjs --ggml DIR (or FORGE_GGML_PTX=DIR).
import { spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import * as kernels from '../packages/ir/dist/kernels/index.js';
import { runsAt, shapeAt } from '../packages/llama/dist/index.js';
import {
  GPUS,
  estimateSequence,
  formatFinding,
  occupancy,
  parsePtx,
  sampleMismatch,
  scaleSample,
  simulate,
  totalWarpInstructions,
  typeBytes,
} from '../packages/ptx-sim/dist/index.js';
import { describeTiming } from './timing.mjs';

/** The PTX directory from `--ggml DIR`, `--ggml=DIR` or FORGE_GGML_PTX; undefined when none. */
export function ggmlPtxDirectory(argv = process.argv, env = process.env) {
  const index = argv.indexOf('--ggml');
  const joined = argv.find((argument) => argument.startsWith('--ggml='));
  const directory =
    index >= 0 ? argv[index + 1] : (joined?.slice('--ggml='.length) ?? env.FORGE_GGML_PTX);
  return directory === undefined || directory === '' ? undefined : resolve(directory);
}

export const GGML_HINT =
  'ggml reference lines: none (write llama.cpp PTX with tools/ggml-ptx.sh LLAMA_CPP_CHECKOUT DIR, then pnpm bench -- --ggml DIR)';

// ggml's GGML_TYPE_* ids (the mangled template argument), block shape and mmvq's vdr (vecdotq.cuh).
const MMVQ_TYPES = {
  'q4k-gemv': { label: 'Q4_K', id: 12, qk: 256, qi: 32, vdr: 2 },
  'q6k-gemv': { label: 'Q6_K', id: 14, qk: 256, qi: 32, vdr: 1 },
  'q8_0-gemv': { label: 'Q8_0', id: 8, qk: 32, qi: 8, vdr: 2 },
};
const SHAPES = [
  { n_out: 4096, n_in: 4096 },
  { n_out: 14336, n_in: 4096 },
  { n_out: 4096, n_in: 14336 },
];
// mmvq's NVIDIA table (calc_nwarps, ncols_dst 1): 4 warps a block, one row a block unless small_k.
const MMVQ_WARPS = 4;
const MATRIX_ROW_PADDING = 512; // common.cuh: src1 is quantized padded to this many columns
const QUANTIZE_BLOCK_SIZE = 256; // quantize.cuh: CUDA_QUANTIZE_BLOCK_SIZE
const Q8_1_BLOCK_BYTES = 36; // block_q8_1: half2 ds, int8 qs[32]

/** Each entry's registers and static shared bytes from `ptxas -arch=<arch> -v` on the module. */
function ptxasResources(path, arch) {
  const run = spawnSync(process.env.PTXAS ?? 'ptxas', [`-arch=${arch}`, '-v', path, '-o', '/dev/null'], { encoding: 'utf8' }); // prettier-ignore
  if (run.error !== undefined || run.status !== 0)
    throw new Error(`ptxas -arch=${arch} ${path}: ${run.error?.message ?? run.stderr}`);
  const resources = {};
  let name;
  for (const line of `${run.stdout}${run.stderr}`.split('\n')) {
    name = /Compiling entry function '([^']+)'/.exec(line)?.[1] ?? name;
    const used = /Used (\d+) registers/.exec(line);
    if (used !== null && name !== undefined)
      resources[name] = {
        registers: Number(used[1]),
        sharedBytes: Number(/(\d+) bytes smem/.exec(line)?.[1] ?? 0),
      };
  }
  return resources;
}

/** ggml-sm_80.ptx and ggml-sm_90.ptx of `directory`, parsed, with ptxas's figures per entry. */
export function loadGgml(directory) {
  const archs = {};
  for (const arch of ['sm_80', 'sm_90']) {
    const path = join(directory, `ggml-${arch}.ptx`);
    // lazyEntries: ggml's module also declares tables and entries this bench never launches.
    const module = parsePtx(readFileSync(path, 'utf8'), { lazyEntries: true });
    const entry = (pattern) => {
      const found = module.entries.find((candidate) => pattern.test(candidate.name));
      if (found === undefined) throw new Error(`${path} has no entry matching ${pattern}`);
      return found;
    };
    archs[arch] = {
      module,
      resources: ptxasResources(path, arch),
      quantize: entry(/^_Z13quantize_q8_1P/),
      mmvq: Object.fromEntries(
        Object.entries(MMVQ_TYPES).map(([id, type]) => [id, entry(new RegExp(`^_Z13mul_mat_vec_qIL9ggml_type${type.id}ELi1ELb0ELb0ELb0E`))]), // prettier-ignore
      ),
      attention: entry(/^_Z18flash_attn_ext_vecILi128ELi1EL9ggml_type1ELS0_1ELb0E/),
      combine: entry(/^_Z26flash_attn_combine_resultsILi128E/),
    };
  }
  const sourcePath = join(directory, 'SOURCE');
  const source = existsSync(sourcePath) ? readFileSync(sourcePath, 'utf8') : '';
  return { archs, commit: /commit: (\w+)/.exec(source)?.[1] ?? 'unknown commit' };
}

const bytesOf = (array) => new Uint8Array(array.buffer, array.byteOffset, array.byteLength);
/** A CUDA uint3 (fastdiv values and the like) as the 12 bytes of its `.b8` parameter. */
const uint3 = (x, y, z) => ({ bytes: bytesOf(new Uint32Array([x, y, z])) });
/** common.cuh's init_fastdiv_values(d): <mp, L, d> with n / d = (mulhi(n, mp) + n) >> L. */
function fastdiv(divisor) {
  let shift = 0;
  while (shift < 32 && 2 ** shift < divisor) shift++;
  const multiplier = Number(((1n << 32n) * ((1n << BigInt(shift)) - BigInt(divisor))) / BigInt(divisor) + 1n); // prettier-ignore
  return uint3(multiplier >>> 0, shift, divisor);
}

/**
 * simulate's arguments from the kernel's arguments in declaration order, checked against the
 * entry's own `.param` list (as tools/cuda-on-simulator.mjs lays out a parameter block): a typed
 * array is a buffer, null a null pointer, a number a scalar of the parameter's type, `{ bytes }`
 * a struct passed by value.
 */
function packArguments(entry, values) {
  if (values.length !== entry.params.length)
    throw new Error(`${entry.name}: ${values.length} arguments for ${entry.params.length} parameters`); // prettier-ignore
  return Object.fromEntries(
    entry.params.map((param, index) => {
      const value = values[index];
      const size = typeBytes(param.type) * (param.length ?? 1);
      if (ArrayBuffer.isView(value)) {
        if (size !== 8) throw new Error(`${param.name}: a buffer for a ${size}-byte parameter`);
        return [param.name, { kind: 'buffer', bytes: bytesOf(value) }];
      }
      if (value?.bytes !== undefined) {
        if (value.bytes.length !== size) throw new Error(`${param.name}: ${value.bytes.length} bytes for ${size}`); // prettier-ignore
        return [param.name, { kind: 'bytes', bytes: value.bytes }];
      }
      if (param.length !== undefined) throw new Error(`${param.name}: a scalar for a .b8 array`);
      return [param.name, { kind: 'scalar', value: value ?? 0 }];
    }),
  );
}

/**
 * One launch: timed from 4 sampled blocks (the whole grid when they did unequal work), or untimed
 * whole without `gpu`. Sanitizer findings throw unless their category is in `tolerate`.
 */
function launch(ggml, arch, entry, { grid, block, sharedBytes = 0, values, tolerate = [] }, gpu) {
  const options = {
    entry: entry.name,
    grid,
    block,
    args: packArguments(entry, values),
    dynamicSharedBytes: sharedBytes,
  };
  const run = (extra) => {
    const result = simulate(ggml.archs[arch].module, { ...options, ...extra });
    const fatal = result.findings.find((finding) => !tolerate.includes(finding.category));
    if (fatal !== undefined) throw new Error(`${entry.name}: ${formatFinding(fatal)}`);
    return result;
  };
  if (gpu === undefined) return run({});
  const timing = { gpu, registers: ggml.archs[arch].resources[entry.name].registers };
  const sampled = run({ sampleBlocks: 4, timing });
  return sampled.sample !== undefined && sampleMismatch(sampled.sample) !== undefined
    ? run({ timing })
    : sampled;
}

/** Forge's bench inputs of a gemv kernel (bench.mjs's gemvInputs): GGUF rows w, f32 x, y. */
export function gemvInputs(kernelId, shape) {
  const testCase = { name: `bench ${kernelId}`, kernelId, schedule: {}, shape, seed: 5, magnitude: 1 }; // prettier-ignore
  return kernels.makeCaseInputs(kernels.getKernel(kernelId), testCase);
}

/**
 * quantize_q8_1 over x then mul_mat_vec_q<type, 1> as ggml_cuda_mul_mat_vec_q launches them for a
 * contiguous n_out x n_in matrix and one f32 column: returns both estimates, the rows computed
 * (blocks the sampled mmvq ran) with their NMSE against the float64 reference, and warp
 * instructions per weight byte over the whole grid.
 */
export function mmvqChain(ggml, gpu, kernelId, shape, inputs = gemvInputs(kernelId, shape)) {
  const type = MMVQ_TYPES[kernelId];
  const arch = gpu.arch;
  const kernel = kernels.getKernel(kernelId);
  const { n_out: nOut, n_in: nIn } = shape;
  const blocksPerRow = nIn / type.qk;
  // small_k (should_use_small_k) packs several rows a block: another instantiation, not compiled.
  if (blocksPerRow < MMVQ_WARPS * ((type.vdr * 32) / type.qi))
    throw new Error(`${kernelId} ${nIn} columns: mmvq would take its small_k variant`);
  const paddedIn = Math.ceil(nIn / MATRIX_ROW_PADDING) * MATRIX_ROW_PADDING;
  const q8 = new Uint8Array((paddedIn / 32) * Q8_1_BLOCK_BYTES);
  // quantize_row_q8_1_cuda(x, nullptr, q8, type, ne00, s01, s02, s03, ne0, ne1, ne2, ne3)
  const quantizeLaunch = {
    grid: [Math.ceil(paddedIn / QUANTIZE_BLOCK_SIZE), 1, 1],
    block: [QUANTIZE_BLOCK_SIZE, 1, 1],
    values: [inputs.x, q8, nIn, nIn, nIn, nIn, paddedIn, 1, fastdiv(1)],
  };
  const quantize = launch(ggml, arch, ggml.archs[arch].quantize, quantizeLaunch, gpu);
  // The sampled run wrote part of q8; mmvq reads all of it, so the whole grid writes it untimed.
  if (quantize.sample !== undefined)
    launch(ggml, arch, ggml.archs[arch].quantize, quantizeLaunch, undefined);
  const y = new Float32Array(nOut).fill(Number.NaN);
  // mul_mat_vec_q_switch_fusion<type, 1>: no ids, no fusion, strides of one channel and sample.
  const rowStride = blocksPerRow;
  const q8Stride = paddedIn / 32;
  const mmvq = launch(
    ggml,
    arch,
    ggml.archs[arch].mmvq[kernelId],
    {
      grid: [nOut, 1, 1],
      block: [32, MMVQ_WARPS, 1],
      values: [
        inputs.w, q8, null, { bytes: new Uint8Array(48) }, y, nIn, uint3(0, 0, 0), rowStride,
        q8Stride, nOut, fastdiv(1), nOut * rowStride, q8Stride, nOut, fastdiv(1),
        nOut * rowStride, q8Stride, nOut, 0,
      ], // prettier-ignore
    },
    gpu,
  );
  const rows = [...y.keys()].filter((row) => !Number.isNaN(y[row]));
  const rowBytes = kernel.weights.bytes({ n_out: 1, n_in: nIn });
  const weights = bytesOf(inputs.w);
  const picked = new Uint8Array(rows.length * rowBytes);
  rows.forEach((row, index) => picked.set(weights.subarray(row * rowBytes, (row + 1) * rowBytes), index * rowBytes)); // prettier-ignore
  const { nmse } = kernels.compareWithReference(
    kernel,
    { w: new Uint32Array(picked.buffer), x: inputs.x },
    { n_in: nIn, n_out: rows.length },
    { y: Float32Array.from(rows, (row) => y[row]) },
  );
  const weightBytes = nOut * rowBytes;
  const instructions = (result) => totalWarpInstructions(scaleSample(result));
  return {
    quantize: quantize.estimate,
    mmvq: mmvq.estimate,
    rows: rows.length,
    nmse,
    perWeightByte: instructions(mmvq) / weightBytes,
    withQuantize: (instructions(mmvq) + instructions(quantize)) / weightBytes,
  };
}

const microseconds = (seconds) => `${(seconds * 1e6).toFixed(2)} µs`;

/** ggml's mmvq lines: per GPU, shape and type, the kernel alone and the q8_1 + mmvq chain. */
export function printGgmlGemv(ggml, log = console.log) {
  log(
    `ggml reference: mul_mat_vec_q ncols_dst 1 + quantize_q8_1 (ggml ${ggml.commit.slice(0, 8)}, A100 on sm_80 PTX, H100/H200 on sm_90; block 32x4, one row a block; NMSE over the sampled rows):`,
  );
  // Inputs are drawn once a shape and type (Q8_0's take seconds) and run on every GPU; lines by GPU.
  const lines = new Map(Object.values(GPUS).map((gpu) => [gpu.name, []]));
  for (const shape of SHAPES)
    for (const kernelId of Object.keys(MMVQ_TYPES)) {
      const inputs = gemvInputs(kernelId, shape);
      for (const gpu of Object.values(GPUS)) {
        const chain = mmvqChain(ggml, gpu, kernelId, shape, inputs);
        const stream = estimateSequence([chain.quantize, chain.mmvq], gpu);
        const graph = estimateSequence([chain.quantize, chain.mmvq], gpu, { graph: true });
        lines
          .get(gpu.name)
          .push(
            `  ggml ${gpu.name} ${`${shape.n_out}x${shape.n_in}`.padEnd(10)} ${MMVQ_TYPES[kernelId].label}: mmvq ${describeTiming(chain.mmvq)}, ${chain.perWeightByte.toFixed(3)} warp instr/weight byte (${chain.withQuantize.toFixed(3)} with q8_1); quantize_q8_1 + mmvq ${microseconds(stream.seconds)} (${microseconds(stream.totalSeconds)} with stream gaps, ${microseconds(graph.totalSeconds)} as a graph), ${(stream.bandwidthFraction * 100).toFixed(0)}% of DRAM; NMSE ${chain.nmse.toExponential(1)} over ${chain.rows} rows`,
          );
      }
    }
  for (const gpuLines of lines.values()) gpuLines.forEach((line) => log(line));
}

/**
 * flash_attn_ext_vec<128, 1, f16, f16> and flash_attn_combine_results<128> as launch_fattn runs them
 * for one token over an f16 cache: Q a permuted [head_dim, 1, n_head] view, K and V token-major
 * cache views (every KV head of a position in one row, Forge's layout), a zero f16 mask (every
 * position visible), no sinks, no KV_max scan (one token, one sequence); 32/8 heads of 128 over
 * `nKv` positions.
 */
export function attentionChain(ggml, gpu, nKv = 4096) {
  const arch = gpu.arch;
  const [nHead, nKvHead, headDim] = [32, 8, 128];
  const shape = { n_head: nHead, n_kv_head: nKvHead, head_dim: headDim, n_kv: nKv, max_ctx: nKv, window: 0 }; // prettier-ignore
  const kernel = kernels.getKernel('sdpa-decode');
  const params = kernel.params(shape);
  const { buffers: inputs } = kernels.sdpaInputs(shape, { cache: 'f16', rng: new kernels.Rng(5), magnitude: 1 }); // prettier-ignore
  const { attention, combine } = ggml.archs[arch];
  const { registers, sharedBytes } = ggml.archs[arch].resources[attention.name];
  // launch_fattn, not stream-k: parallel_blocks starts at the occupancy (what
  // cudaOccupancyMaxActiveBlocksPerMultiprocessor returns), then the best wave efficiency wins.
  const threads = 128; // ggml_cuda_fattn_vec_get_nthreads_host
  const blocksPerSm = occupancy({ blocks: 1, threadsPerBlock: threads, registers, sharedBytes }, gpu).blocksPerSm; // prettier-ignore
  const tilesKv = Math.ceil(nKv / headDim); // nbatch_fa = D for the vec kernel
  const tilesDst = 1 * (nHead / nKvHead) * nKvHead * 1; // ntiles_x * ntiles_z_gqa * ne12 * ne03
  let parallelBlocks = Math.min(blocksPerSm, tilesKv);
  const perWave = gpu.sms * blocksPerSm;
  let [bestWaves, bestEfficiency] = [0, 0];
  for (let test = parallelBlocks; test <= tilesKv; test++) {
    const waves = Math.ceil((tilesDst * test) / perWave);
    const efficiency = Math.floor((100 * tilesDst * test) / (waves * perWave));
    if (bestEfficiency >= 95 && waves > bestWaves) break;
    if (efficiency > bestEfficiency) [bestWaves, bestEfficiency, parallelBlocks] = [waves, efficiency, test]; // prettier-ignore
  }
  const out = new Float32Array(nHead * headDim);
  const parts = parallelBlocks > 1 ? new Float32Array(parallelBlocks * nHead * headDim) : out;
  const meta = parallelBlocks > 1 ? new Float32Array(parallelBlocks * nHead * 2) : null;
  const mask = new Uint16Array(nKv); // f16 zeros
  const qRow = nHead * headDim * 4; // Q->nb[1]: the token stride of the permuted view
  const kvRow = nKvHead * headDim * 2; // nb11, nb21: one cache position, every KV head
  const attentionLaunch = {
    grid: [1, parallelBlocks, nHead],
    block: [32, threads / 32, 1],
    values: [
      inputs.q, inputs.k, inputs.v, mask, null, null, parts, meta,
      params.scale, 0, 1, 1, 2 ** Math.floor(Math.log2(nHead)), 0,
      headDim, fastdiv(1), nHead, 1, qRow, headDim * 4, qRow,
      headDim, nKv, nKvHead, 1, kvRow, headDim * 2, kvRow * nKv,
      kvRow, headDim * 2, kvRow * nKv,
      1, 1, 1, nKv * 2, nKv * 2, nKv * 2,
    ], // prettier-ignore
    // Each KV tile rewrites KQ[tid] after other lanes read it the tile before, with shfl.sync but
    // no __syncwarp between: the sanitizer's warp-level race, reported in the line, not fatal.
    tolerate: ['shared-race'],
  };
  const attend = launch(ggml, arch, attention, attentionLaunch, gpu);
  // A sampled run wrote some parts only; the combine and the NMSE need them all.
  const whole =
    attend.sample === undefined
      ? attend
      : launch(ggml, arch, attention, attentionLaunch, undefined);
  const races = whole.findings.reduce((sum, finding) => sum + finding.occurrences, 0);
  const estimates = [attend.estimate];
  if (parallelBlocks > 1) {
    const combineLaunch = {
      grid: [1, nHead, 1],
      block: [headDim, 1, 1],
      sharedBytes: parallelBlocks * 8,
      values: [parts, meta, out, parallelBlocks],
    };
    const combined = launch(ggml, arch, combine, combineLaunch, gpu);
    if (combined.sample !== undefined) launch(ggml, arch, combine, combineLaunch, undefined);
    estimates.push(combined.estimate);
  }
  const { nmse } = kernels.compareWithReference(kernel, inputs, params, { out });
  return { estimates, parallelBlocks, nmse, races, sampled: attend.sample !== undefined };
}

/** Forge's mat-vec kernels by the mmvq instantiation llama.cpp runs for the same tensor type. */
const MMVQ_FOR = {
  'q4k-gemv': 'q4k-gemv',
  'q6k-gemv': 'q6k-gemv',
  'q6k-soa-gemv': 'q6k-gemv',
  'q8_0-gemv': 'q8_0-gemv',
};

/**
 * A decode plan's step as llama.cpp's CUDA backend runs it, on `gpu`: every mat-vec as its own
 * quantize_q8_1 + mul_mat_vec_q (a joined weight's tensors apart), attention as
 * flash_attn_ext_vec (+ combine) over llama.cpp's KV view (the used positions padded to 256), and
 * for the kernels whose ggml PTX is not compiled here
 * Forge's own times (`forgeSeconds(kernel, shape)`) at llama.cpp's launch count: the residual add
 * and the norm apart (add-rmsnorm is two launches), gate, up and the GLU as mmvq's fused instance
 * (one quantize_q8_1 and one launch), rope and the cache writes once for q and k,
 * once for k and v (two launches each), and no argmax (llama.cpp samples on the host). Returns the
 * kernels' seconds and the dispatch count.
 */
export function ggmlDecodeStep(ggml, gpu, plan, position, forgeSeconds) {
  let seconds = 0;
  let dispatches = 0;
  const cache = (ggml.stepCache ??= new Map());
  const memo = (key, compute) => {
    if (!cache.has(key)) cache.set(key, compute());
    return cache.get(key);
  };
  for (const launch of plan.launches) {
    // llama.cpp runs one attention a layer: the launch Forge runs at this position stands for it.
    if (!runsAt(launch, position)) continue;
    const shape = shapeAt(launch, position);
    const mmvq = MMVQ_FOR[launch.kernel];
    if (mmvq !== undefined) {
      // A joined weight (q, k and v in one Forge launch) is a mat-vec per tensor in llama.cpp.
      const weights = plan.buffers.find((buffer) => buffer.name === launch.buffers.w);
      for (const rows of weights?.tensors?.map((part) => part.rows) ?? [shape.n_out]) {
        const matvec = { n_out: rows, n_in: shape.n_in };
        const chain = memo(`${gpu.name} ${mmvq} ${matvec.n_out}x${matvec.n_in}`, () =>
          mmvqChain(ggml, gpu, mmvq, matvec),
        );
        seconds += chain.quantize.seconds + chain.mmvq.seconds;
        dispatches += 2;
      }
    } else if (launch.kernel === 'sdpa-decode' || launch.kernel === 'sdpa-decode-quantize') {
      const nKv = Math.max(256, Math.ceil(shape.n_kv / 256) * 256);
      const chain = memo(`${gpu.name} fattn ${nKv}`, () => attentionChain(ggml, gpu, nKv));
      seconds += chain.estimates.reduce((sum, estimate) => sum + estimate.seconds, 0);
      dispatches += chain.estimates.length;
    } else if (launch.kernel === 'q4k-swiglu-gemv') {
      // mmvq's has_fusion instance (gate, up and the GLU in one launch), which llama.cpp runs at
      // this commit: modeled as quantize_q8_1 and both matrices' mmvq time in one launch.
      const matvec = { n_out: shape.n_out, n_in: shape.n_in };
      const chain = memo(`${gpu.name} q4k-gemv ${matvec.n_out}x${matvec.n_in}`, () =>
        mmvqChain(ggml, gpu, 'q4k-gemv', matvec),
      );
      seconds += chain.quantize.seconds + 2 * chain.mmvq.seconds;
      dispatches += 2;
    } else if (launch.kernel === 'add-rmsnorm' || launch.kernel === 'add-rmsnorm-quantize') {
      seconds += forgeSeconds('add', { n: shape.n_embd }) + forgeSeconds('rmsnorm', shape);
      dispatches += 2;
    } else if (launch.kernel.startsWith('rope-kv-store')) {
      // llama.cpp ropes q and k apart and copies k and v into the cache apart: four launches.
      const cache = launch.kernel.replace('rope-kv-store', 'kv-store');
      seconds += forgeSeconds('rope', shape) + forgeSeconds(cache, shape);
      dispatches += 4;
    } else if (launch.kernel !== 'argmax') {
      seconds += forgeSeconds(launch.kernel, shape);
      dispatches += launch.kernel === 'rope' || launch.kernel.startsWith('kv-store') ? 2 : 1;
    }
  }
  return { seconds, dispatches };
}

/** ggml's decode-attention lines: fattn-vec + combine per GPU. */
export function printGgmlAttention(ggml, log = console.log) {
  log(
    `ggml reference: flash_attn_ext_vec f16 K/V D=128, 1 column + flash_attn_combine_results, 32/8 heads, n_kv 4096 (ggml ${ggml.commit.slice(0, 8)}; on A100 with a mask llama.cpp's fattn.cu picks its mma kernel instead):`,
  );
  for (const gpu of Object.values(GPUS)) {
    const chain = attentionChain(ggml, gpu);
    const stream = estimateSequence(chain.estimates, gpu);
    const graph = estimateSequence(chain.estimates, gpu, { graph: true });
    log(
      `  ggml ${gpu.name}: ${microseconds(stream.seconds)} in ${chain.estimates.length} kernels (${microseconds(stream.totalSeconds)} with stream gaps, ${microseconds(graph.totalSeconds)} as a graph), ${(stream.bandwidthFraction * 100).toFixed(0)}% of DRAM, parallel_blocks ${chain.parallelBlocks}${chain.sampled ? '' : ' (whole grid: unequal blocks)'}: ${chain.estimates.map(describeTiming).join(' + ')}; NMSE ${chain.nmse.toExponential(1)}, sanitizer: ${chain.races} warp-level shared races (KQ reused without __syncwarp)`,
    );
  }
}

// Standalone: node tools/bench-ggml.mjs --ggml DIR prints both sections.
if (
  process.argv[1] !== undefined &&
  import.meta.url === pathToFileURL(resolve(process.argv[1])).href
) {
  const directory = ggmlPtxDirectory();
  if (directory === undefined) console.log(GGML_HINT);
  else {
    const ggml = loadGgml(directory);
    printGgmlGemv(ggml);
    printGgmlAttention(ggml);
  }
}
