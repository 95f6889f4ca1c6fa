// Prints emission speed: in-process time to emit every golden entry, and one `forge emit` process.
import { spawnSync } from 'node:child_process';
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';
import { emitEntry, goldenEntries } from '../packages/cli/dist/index.js';
import { ready } from '../packages/ir/dist/index.js';

// `pnpm bench --sass`: only the SASS report of the golden PTX kernels (tools/bench-sass.mjs).
if (process.argv.includes('--sass')) {
  await (await import('./bench-sass.mjs')).main(process.argv.slice(2));
  process.exit(process.exitCode ?? 0);
}

await ready();

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const bin = fileURLToPath(new URL('../packages/cli/dist/bin.js', import.meta.url));

for (let warm = 0; warm < 5; warm++) goldenEntries().forEach(emitEntry);
const catalogRuns = [];
for (let run = 0; run < 50; run++) {
  const start = performance.now();
  for (const entry of goldenEntries()) emitEntry(entry);
  catalogRuns.push(performance.now() - start);
}

const processRuns = [];
for (let run = 0; run < 11; run++) {
  const start = performance.now();
  const result = spawnSync(
    process.execPath,
    [bin, 'emit', 'rmsnorm', '--target', 'ptx', '--arch', 'sm_80'],
    { encoding: 'utf8' },
  );
  processRuns.push(performance.now() - start);
  if (result.status !== 0) throw new Error(`forge emit failed: ${result.stderr}`);
}

const report = (label, value, target) =>
  console.log(
    `${label.padEnd(44)} ${value.toFixed(2).padStart(9)} ms   target <= ${target} ms   ${value <= target ? 'ok' : 'OVER TARGET'}`,
  );
console.log(`node ${process.version}, ${goldenEntries().length} golden entries`);
report('emit every golden entry in-process (median)', median(catalogRuns), 50);
report('one `forge emit rmsnorm` process (median)', median(processRuns), 400);

// What a browser engine downloads for emitting WGSL: @forge/ir + @forge/wgsl, bundled by esbuild.
{
  const { build } = await import('esbuild');
  const { gzipSync } = await import('node:zlib');
  const bundled = await build({
    stdin: {
      contents:
        "export { ready } from '@forge/ir'; export { getKernel } from '@forge/ir/kernels'; export { emitWgsl, wgslTarget } from '@forge/wgsl';",
      resolveDir: fileURLToPath(new URL('.', import.meta.url)),
    },
    bundle: true,
    format: 'esm',
    platform: 'browser',
    minify: true,
    write: false,
  });
  const text = bundled.outputFiles[0].contents;
  console.log(
    `${'browser bundle, @forge/ir + @forge/wgsl'.padEnd(44)} ${(text.length / 1024).toFixed(1).padStart(9)} KiB minified, ${(gzipSync(text).length / 1024).toFixed(1)} KiB gzipped`,
  );
}

// Simulator throughput: the golden rmsnorm PTX on 3 rows of 4096, and affine-f32 on 1M elements.
const { dramBytesRead, parsePtx, sectorEfficiency, totalWarpInstructions } =
  await import('../packages/ptx-sim/dist/index.js');
const { simulateShader } = await import('../packages/ptx/dist/simulate.js');
const kernels = await import('../packages/ir/dist/kernels/index.js');
const gguf = await import('../packages/ir/dist/gguf.js');
const { emitPtx, ptxTarget } = await import('../packages/ptx/dist/index.js');

// PTX parse time of a 2,000-statement module (labels, guarded vector loads, shuffles, fma): the
// bound moved here from ptx-sim's parser tests, where a wall-clock assertion failed under load.
{
  const lines = ['.version 7.0', '.target sm_80', '.address_size 64', '.visible .entry k()', '{'];
  lines.push('.reg .b32 %r<100>;', '.reg .pred %p<4>;', '.reg .f32 %f<20>;', '.reg .b64 %rd<10>;');
  for (let i = 0; i < 500; i++) {
    lines.push(`$L_${i}:`);
    lines.push(`\t@!%p1 ld.global.nc.v4.f32 {%f1, %f2, %f3, %f4}, [%rd${i % 10}+${i * 16}];`);
    lines.push(`\tshfl.sync.bfly.b32 %r${i % 100}|%p2, %r2, 0x10, 31, -1;`);
    lines.push(`\tfma.rn.f32 %f5, %f1, 0f3F800000, %f${i % 20};`);
  }
  const source = `${lines.join('\n')}\n}\n`;
  const parseRuns = [];
  for (let run = 0; run < 21; run++) {
    const start = performance.now();
    parsePtx(source);
    parseRuns.push(performance.now() - start);
  }
  report('parse a 2,000-statement PTX module (median)', median(parseRuns), 100);
  // The first parse includes the JIT's warm-up: shown, not held to the target.
  console.log(`${'  first (cold) parse'.padEnd(44)} ${parseRuns[0].toFixed(2).padStart(9)} ms`);
}

for (const [kernelId, shape] of [
  ['rmsnorm', { n_embd: 4096, rows: 3 }],
  ['affine-f32', { n: 1 << 20 }],
]) {
  const kernel = kernels.getKernel(kernelId);
  const shader = emitPtx(kernel.spec, {}, ptxTarget('sm_80'));
  const params = kernel.params(shape);
  const lengths = kernel.bufferLengths(shape);
  const rates = [];
  let warps = 0;
  for (let run = 0; run < 3; run++) {
    const buffers = {};
    for (const parameter of shader.launch.parameters)
      if (parameter.kind === 'buffer')
        buffers[parameter.name] = new Uint8Array(4 * lengths[parameter.name]);
    const result = simulateShader(shader, buffers, params, { sanitize: true });
    warps = totalWarpInstructions(result.counters);
    rates.push((warps / result.milliseconds) * 1000);
  }
  console.log(
    `simulator ${kernelId} ${JSON.stringify(shape)}: ${warps} warp instructions, median ${(median(rates) / 1e6).toFixed(2)} M warp-instructions/s`,
  );
}

// Codec throughput: MB/s of quantized bytes decoded and encoded, on a 256 x 4096 matrix.
{
  const rows = 256;
  const cols = 4096;
  const values = new Float32Array(rows * cols).map(
    (_, index) => Math.sin(index * 0.37) * (1 + (index % 7)),
  );
  for (const type of gguf.QUANT_TYPES) {
    const encodeRuns = [];
    const decodeRuns = [];
    let bytes;
    const encodeRepeats = type.endsWith('K') ? 1 : 3;
    for (let run = 0; run < encodeRepeats; run++) {
      const start = performance.now();
      bytes = gguf.quantize(type, values, rows, cols);
      encodeRuns.push(performance.now() - start);
    }
    for (let run = 0; run < 5; run++) {
      const start = performance.now();
      gguf.dequantize(type, bytes, rows, cols);
      decodeRuns.push(performance.now() - start);
    }
    const rate = (milliseconds) => (bytes.byteLength / 1e6 / (milliseconds / 1000)).toFixed(1);
    console.log(
      `codec ${type.padEnd(4)} decode ${rate(median(decodeRuns)).padStart(7)} MB/s   encode ${rate(median(encodeRuns)).padStart(7)} MB/s (quantized bytes)`,
    );
  }
}

/**
 * A gemv catalog kernel's bench inputs at `shape` (seed 5, magnitude 1), its params, and its weight
 * payload bytes: alignment padding (repacked rows) is never read, so ratios are over the payload.
 */
function gemvInputs(kernel, schedule, shape) {
  const testCase = { name: `bench ${kernel.spec.id}`, kernelId: kernel.spec.id, schedule, shape, seed: 5, magnitude: 1 }; // prettier-ignore
  return {
    buffers: kernels.makeCaseInputs(kernel, testCase),
    params: kernel.params(shape),
    weightBytes: kernel.weights.bytes(shape) - (kernel.weights.paddingBytes?.(shape) ?? 0),
  };
}

// Weight-stream bandwidth on the simulator, per gemv golden entry, at each kernel's default shape.
{
  const { readFileSync } = await import('node:fs');
  const manifest = JSON.parse(
    readFileSync(new URL('../golden/manifest.json', import.meta.url), 'utf8'),
  );
  // The default shape, and n_in = 4096 (an LLM's embedding width: no padding in repacked rows).
  const gemvRuns = manifest.entries.flatMap((entry) =>
    [{}, { n_in: 4096 }].map((override) => ({ entry, override })),
  );
  for (const { entry, override } of gemvRuns) {
    const kernel = kernels.getKernel(entry.kernelId);
    if (entry.target.kind !== 'ptx' || kernel.weights === undefined) continue;
    const shape = { ...kernel.defaultShape, ...override };
    const { buffers, params, weightBytes } = gemvInputs(kernel, entry.schedule, shape);
    const source = readFileSync(new URL(`../golden/${entry.file}`, import.meta.url), 'utf8');
    const shader = emitPtx(kernel.spec, entry.schedule, ptxTarget(entry.target.arch));
    const result = simulateShader(shader, buffers, params, { source });
    const weightName = `param_${kernel.weights.buffer}`;
    const traffic = result.counters.buffers[weightName];
    // DRAM-level (modeled 4 MiB L2) reads over the bytes a gemv must move: the weights as stored
    // (repacked rows include their alignment padding), x and y.
    const otherBytes = Object.entries(buffers)
      .filter(([name]) => name !== kernel.weights.buffer)
      .reduce((sum, [, data]) => sum + data.byteLength, 0);
    const dramRatio = dramBytesRead(result.counters) / (kernel.weights.bytes(shape) + otherBytes);
    // Sectors all loads and stores touch per weight byte: the SM's load traffic, x re-reads included.
    const sectorBytes = Object.values(result.counters.buffers).reduce(
      (sum, buffer) => sum + buffer.sectorBytes,
      0,
    );
    const percent = (value) => `${(value * 100).toFixed(1)}%`;
    console.log(
      `${entry.file.padEnd(36)} ${JSON.stringify(shape)}: weight bytes read / weight bytes ${(traffic.bytesRead / weightBytes).toFixed(4)}, weight sector efficiency ${percent(sectorEfficiency(result.counters, [weightName]))}, x sector efficiency ${percent(sectorEfficiency(result.counters, ['param_x']))}, all-buffer ${percent(sectorEfficiency(result.counters))}, sector bytes / weight byte ${(sectorBytes / weightBytes).toFixed(2)}, DRAM read / (W as stored + x + y) ${dramRatio.toFixed(4)}, findings ${result.findings.length}`,
    );
  }
}

// llama.cpp's own PTX modeled in the same run (tools/bench-ggml.mjs), given `pnpm bench -- --ggml DIR`
// or FORGE_GGML_PTX=DIR with DIR written by tools/ggml-ptx.sh; without it, one line says how.
const ggmlBench = await import('./bench-ggml.mjs');
const ggmlDirectory = ggmlBench.ggmlPtxDirectory();
const ggml = ggmlDirectory === undefined ? undefined : ggmlBench.loadGgml(ggmlDirectory);
if (ggml === undefined) console.log(ggmlBench.GGML_HINT);

// Decode-speed figures per gemv kernel (issue #12's table): at 256 x 4096 on sm_80, warp
// instructions per weight byte, DRAM read over W + x + y, weight sector efficiency and NMSE
// against the exact y; and the A100/H100/H200 timing model at 4096 x 4096, 14336 x 4096 and 4096 x
// 14336 from 4 sampled workgroups. ggml's mmvq figures are the reference lines: its
// mul_mat_vec_q (ggml d99724f2, nvcc 13.0 -O3 sm_80, ncols_dst 1, grid 256 x block 32x4) on the
// simulator, same shape and data, plus its quantize_q8_1 pass over x (15,488 warp instructions).
{
  const { GPUS } = await import('../packages/ptx-sim/dist/index.js');
  const { timeShader, describeTiming } = await import('./timing.mjs');
  const GGML = { 'q4k-gemv': 0.514, 'q6k-gemv': 0.541, 'q6k-soa-gemv': 0.541, 'q8_0-gemv': 0.211 };
  console.log('decode-speed gemv (sm_80 PTX; ggml mmvq + q8_1 pass, warp instr / weight byte):');
  for (const kernelId of Object.keys(GGML)) {
    const kernel = kernels.getKernel(kernelId);
    const shader = emitPtx(kernel.spec, {}, ptxTarget('sm_80'));
    const { buffers, params, weightBytes } = gemvInputs(kernel, {}, { n_out: 256, n_in: 4096 });
    const result = simulateShader(shader, buffers, params);
    const allBytes = Object.values(buffers).reduce((sum, data) => sum + data.byteLength, 0);
    // The run wrote only y, which a gemv's reference does not read: the buffers are still its inputs.
    const nmse = kernels.compareWithReference(kernel, buffers, params, buffers).nmse;
    const weightName = `param_${kernel.weights.buffer}`;
    console.log(
      `  ${kernelId.padEnd(13)} ${(totalWarpInstructions(result.counters) / weightBytes).toFixed(3)} warp instr/weight byte (ggml ${GGML[kernelId]}), DRAM ${(dramBytesRead(result.counters) / allBytes).toFixed(3)} x (W+x+y), weight sectors ${(sectorEfficiency(result.counters, [weightName]) * 100).toFixed(1)}%, NMSE ${nmse.toExponential(1)}, findings ${result.findings.length}`,
    );
    // The timing model per GPU on its arch's PTX (4 sampled workgroups): the mat-vec dispatch, and
    // the launch with any x-quantizing dispatch before it and stream launch gaps.
    for (const [nOut, nIn] of [
      [4096, 4096],
      [14336, 4096],
      [4096, 14336],
    ]) {
      const large = gemvInputs(kernel, {}, { n_out: nOut, n_in: nIn });
      for (const gpu of Object.values(GPUS)) {
        const archShader = emitPtx(kernel.spec, {}, ptxTarget(gpu.arch));
        const { sequence } = timeShader(archShader, large.buffers, large.params, gpu);
        const matVec = sequence.dispatches[sequence.dispatches.length - 1];
        const chain = sequence.dispatches.length > 1 ? `; with its x pass ${(sequence.seconds * 1e6).toFixed(2)} µs, ${(sequence.totalSeconds * 1e6).toFixed(2)} µs with launch gaps` : `; ${(sequence.totalSeconds * 1e6).toFixed(2)} µs with its launch gap`; // prettier-ignore
        console.log(`    ${nOut}x${nIn} ${gpu.name}: ${describeTiming(matVec)}${chain}`);
      }
    }
  }
}

// ggml's mmvq (and its quantize_q8_1 pass) beside the lines above, at 4096 and 14336 shapes.
if (ggml !== undefined) ggmlBench.printGgmlGemv(ggml);

// Decode attention (issue #13): sdpa-decode, f16 K/V, 8 query heads over 2 KV heads, sm_80 PTX at
// the default schedule, per head_dim and n_kv: warp instructions per visible K+V byte against the
// peer's, DRAM read over (visible K+V + q + out + scratch) with scratch as allocated (all `splits`
// rows, of which only ceil(n_kv / 256) are used: hence < 1 at short n_kv) and K+V DRAM read over the
// visible K+V, K and V sector efficiency, NMSE against the float64 reference; then the issue's H200
// case (32/8 heads, head_dim 128, n_kv 4096), estimated dispatch by dispatch (estimateSequence)
// from 4 sampled workgroups of each dispatch: 1.5 s instead of ~55 s for the whole grids, whose
// estimate it matches within 1% (measured on H200: 4.27 µs whole, 4.30 µs sampled).
{
  const { GPUS } = await import('../packages/ptx-sim/dist/index.js');
  const { timeShader, describeTiming } = await import('./timing.mjs');
  const { mergeSimulationResults, simulateShaderDispatches } =
    await import('../packages/ptx/dist/simulate.js');
  const { evaluateSizeExpression } = await import('../packages/ir/dist/index.js');
  // llama.cpp's fattn-vec (f16 K/V, one query column, its flash_attn_combine_results included) at 8/2
  // heads, warp instructions per visible K+V byte by head_dim and n_kv: measured on this simulator
  // in a scratch folder outside the repo (ggml d99724f2, nvcc 13.0 -O3 sm_80, launched as its host
  // code would on an A100, no mask); issue #13 quoted 0.36 (128) and 0.59 (64) and set targets
  // 0.28 and 0.47, so a line's target is the smaller of those and 0.8 x the measured figure.
  const PEER = {
    128: { 256: 0.373, 1024: 0.365, 4096: 0.363 },
    64: { 256: 0.628, 1024: 0.62, 4096: 0.577 },
  };
  const ISSUE_TARGET = { 128: 0.28, 64: 0.47 };
  const kernel = kernels.getKernel('sdpa-decode');
  const shader = emitPtx(kernel.spec, {}, ptxTarget('sm_80'));
  const sdpaRun = (heads, headDim, nKv, options = {}) => {
    const [nHead, nKvHead] = heads;
    const shape = { n_head: nHead, n_kv_head: nKvHead, head_dim: headDim, n_kv: nKv, max_ctx: nKv, window: 0 }; // prettier-ignore
    const rng = new kernels.Rng(5);
    const { buffers: inputs } = kernels.sdpaInputs(shape, { cache: 'f16', rng, magnitude: 1 });
    const params = kernel.params(shape);
    const out = new Float32Array(nHead * headDim);
    const dispatches = simulateShaderDispatches(shader, { ...inputs, out }, params, options);
    // Every position visible (window 0); f16 K and V, 2 bytes an element.
    const kvBytes = 2 * nKv * nKvHead * headDim * 2;
    const sizes = { ...params, ...shader.schedule };
    const scratch = (shader.launch.scratch ?? []).reduce(
      (sum, buffer) => sum + evaluateSizeExpression(buffer.bytes, sizes),
      0,
    );
    const otherBytes = inputs.q.byteLength + out.byteLength + scratch;
    return { dispatches, inputs, params, out, kvBytes, otherBytes };
  };
  console.log(
    'decode attention sdpa-decode (f16 K/V, 8/2 heads, sm_80 PTX; llama.cpp fattn-vec, warp instr / K+V byte):',
  );
  for (const headDim of [128, 64]) {
    for (const nKv of [256, 1024, 4096]) {
      const { dispatches, inputs, params, out, kvBytes, otherBytes } = sdpaRun([8, 2], headDim, nKv); // prettier-ignore
      const { counters, findings } = mergeSimulationResults(dispatches);
      const nmse = kernels.compareWithReference(kernel, inputs, params, { out }).nmse;
      const sectors = (name) => `${(sectorEfficiency(counters, [name]) * 100).toFixed(1)}%`;
      console.log(
        `  head_dim ${String(headDim).padStart(3)} n_kv ${String(nKv).padStart(4)}: ${(totalWarpInstructions(counters) / kvBytes).toFixed(3)} warp instr/K+V byte (fattn-vec ${PEER[headDim][nKv]}, target <= ${Math.min(ISSUE_TARGET[headDim], 0.8 * PEER[headDim][nKv]).toFixed(3)}), DRAM read ${(dramBytesRead(counters) / (kvBytes + otherBytes)).toFixed(4)} x (K+V + q + out + scratch), K+V ${(dramBytesRead(counters, ['param_k', 'param_v']) / kvBytes).toFixed(4)} x, sectors K ${sectors('param_k')} V ${sectors('param_v')}, NMSE ${nmse.toExponential(1)}, findings ${findings.length}`,
      );
    }
  }
  // The issue's H200 case on the timing model, per GPU on its arch's PTX: each dispatch timed from 4
  // sampled workgroups (at n_kv 4096 every split of 256 does equal work), the chain with launch gaps.
  for (const gpu of Object.values(GPUS)) {
    const archShader = emitPtx(kernel.spec, {}, ptxTarget(gpu.arch));
    const shape = { n_head: 32, n_kv_head: 8, head_dim: 128, n_kv: 4096, max_ctx: 4096, window: 0 };
    const { buffers: inputs } = kernels.sdpaInputs(shape, { cache: 'f16', rng: new kernels.Rng(5), magnitude: 1 }); // prettier-ignore
    const out = new Float32Array(32 * 128);
    const { sequence } = timeShader(archShader, { ...inputs, out }, kernel.params(shape), gpu);
    console.log(
      `  32/8 heads, head_dim 128, n_kv 4096 on ${gpu.name}: ${(sequence.seconds * 1e6).toFixed(1)} µs in ${sequence.dispatches.length} kernels (${(sequence.totalSeconds * 1e6).toFixed(1)} µs with launch gaps), ${(sequence.bandwidthFraction * 100).toFixed(0)}% of DRAM: ${sequence.dispatches.map(describeTiming).join(' + ')}`,
    );
  }
}

// ggml's fattn-vec + combine beside the 32/8-head lines above.
if (ggml !== undefined) ggmlBench.printGgmlAttention(ggml);

// Tensor-core mat-vec (issue #14): wmma-gemv (f16 W and X) and q4k-soa-wmma (repacked Q4_K W, f16
// X) at 256 x 4096 on sm_80, per n_cols:
// warp instructions per weight byte (and over the n_cols = 1 figure: the issue asks <= 1.3 at 8),
// DRAM read over W + X + Y, W sector efficiency, NMSE against the float64 reference; and the
// A100/H100/H200 estimates at 4096 x 4096 from 4 sampled workgroups (each takes one 16-row tile,
// so every workgroup does equal work and a sample stands for all).
{
  const { GPUS } = await import('../packages/ptx-sim/dist/index.js');
  const { timeShader, describeTiming } = await import('./timing.mjs');
  for (const kernelId of ['wmma-gemv', 'q4k-soa-wmma']) {
    const kernel = kernels.getKernel(kernelId);
    const shader = emitPtx(kernel.spec, {}, ptxTarget('sm_80'));
    const wmmaInputs = (shape) => {
      const testCase = { name: 'bench', kernelId, schedule: {}, shape, seed: 5, magnitude: 1 }; // prettier-ignore
      return { buffers: kernels.makeCaseInputs(kernel, testCase), params: kernel.params(shape) };
    };
    console.log(
      `tensor-core mat-vec ${kernelId} (sm_80 PTX, 256 x 4096; warp instr / weight byte):`,
    );
    let single;
    for (const nCols of [1, 2, 4, 8, 16]) {
      const { buffers, params } = wmmaInputs({ n_cols: nCols, n_out: 256, n_in: 4096 });
      const result = simulateShader(shader, buffers, params);
      const allBytes = Object.values(buffers).reduce((sum, data) => sum + data.byteLength, 0);
      // The reference reads only w and x, which the run left as they were.
      const nmse = kernels.compareWithReference(kernel, buffers, params, buffers).nmse;
      const perByte = totalWarpInstructions(result.counters) / buffers.w.byteLength;
      single ??= perByte;
      const large4096 = wmmaInputs({ n_cols: nCols, n_out: 4096, n_in: 4096 });
      const estimates = Object.values(GPUS).map((gpu) => {
        const archShader = emitPtx(kernel.spec, {}, ptxTarget(gpu.arch));
        return { gpu: gpu.name, ...timeShader(archShader, large4096.buffers, large4096.params, gpu).sequence.dispatches[0] }; // prettier-ignore
      });
      console.log(
        `  n_cols ${String(nCols).padStart(2)}: ${perByte.toFixed(4)} warp instr/weight byte (${(perByte / single).toFixed(2)} x n_cols 1, target <= 1.3 at 8), DRAM ${(dramBytesRead(result.counters) / allBytes).toFixed(3)} x (W+X+Y), W sectors ${(sectorEfficiency(result.counters, ['param_w']) * 100).toFixed(1)}%, NMSE ${nmse.toExponential(1)}, findings ${result.findings.length}; 4096x4096: ${estimates.map((e) => `${e.gpu} ${describeTiming(e)}`).join('; ')}`,
      );
    }
  }
}

// The decode step (issue #15): tokens/s on WebGPU and the 7B estimate beside its bound.
await import('./bench-decode.mjs');
