// Decode-step figures (issues #15, #27), run by bench.mjs: tokens/s of the tiny models on WebGPU,
// and the H200 time per token of a Llama-3-8B-shaped Q4_K_M model on the timing model (its
// kernels' times and their launch gaps, on a stream and as a CUDA graph) at positions 1, 1024 and
// 8192, beside the weight-streaming bound.
import { performance } from 'node:perf_hooks';
import { fileURLToPath } from 'node:url';

const llama = await import('../packages/llama/dist/index.js');
const kernels = await import('../packages/ir/dist/kernels/index.js');
const { emitPtx, ptxTarget } = await import('../packages/ptx/dist/index.js');
const { GPUS } = await import('../packages/ptx-sim/dist/index.js');
const { timeShader } = await import('./timing.mjs');

const median = (values) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)];
const models = fileURLToPath(new URL('../fixtures/tiny-llama/', import.meta.url));

// Tokens/s on WebGPU (Dawn on this machine's adapter): the first step builds the pipelines, then 48
// steps (positions 1–48 of the 64-position cache), each one submission, timed until its logits are
// mapped back.
console.log('forge decode on WebGPU, tiny models (vocab 256, n_embd 256, 2 layers, 4/2 heads):');
for (const [variant, kv] of [
  ['f32', 'f32'],
  ['f32', 'f16'],
  ['q', 'f16'],
]) {
  const model = await llama.readLlamaModel(`${models}tiny-llama-${variant}.gguf`);
  const decoder = await llama.openDecoder(model, { target: 'wgsl', kv });
  const first = await decoder.step(1, 0);
  const times = [];
  let token = first.token;
  const start = performance.now();
  for (let position = 1; position <= 48; position++) {
    const result = await decoder.step(token, position);
    times.push(result.milliseconds);
    token = result.token;
  }
  const seconds = (performance.now() - start) / 1000;
  decoder.close();
  console.log(
    `  ${`tiny-llama-${variant}, ${kv} KV`.padEnd(24)} ${(48 / seconds).toFixed(1).padStart(6)} tokens/s, median ${median(times).toFixed(2)} ms a step (first step ${first.milliseconds.toFixed(0)} ms with pipeline builds)`,
  );
}

// The decode step of a Llama-3-8B-shaped model (issue #27's table): n_embd 4096, 32 layers, 32/8
// heads of 128, n_ff 14336, vocab 128256; Q4_K with Q6_K where llama.cpp's Q4_K_M puts it (output,
// and attn_v and ffn_down of the layers its use_more_bits picks), f16 KV cache; one token at
// positions 1, 1024 and 8192. Each distinct launch (kernel, shape, schedule) is simulated once as
// sm_90 PTX (4 sampled workgroups a dispatch, the whole grid where a sample's blocks differ) and
// timed on the H200 model dispatch by dispatch (a mat-vec reusing the x its predecessor quantized
// counts its row dispatch only); the token's time is the sum over the plan's
// launches, then with every dispatch's launch gap on a stream and as one CUDA graph, beside the
// weight-streaming bound (the weight bytes a token reads over the datasheet DRAM bandwidth).
const SHAPE_LLAMA3_8B = {
  nVocab: 128256,
  nEmbd: 4096,
  nLayer: 32,
  nHead: 32,
  nKvHead: 8,
  headDim: 128,
  nFf: 14336,
  rmsEps: 1e-5,
  ropeBase: 500000,
  ropeMode: 'normal',
  contextLength: 8193,
};
const gpu = GPUS.H200;
// llama.cpp's kernels for the same step, when `--ggml DIR` (or FORGE_GGML_PTX) gives their PTX.
const ggmlBench = await import('./bench-ggml.mjs');
const ggmlDirectory = ggmlBench.ggmlPtxDirectory();
const ggml = ggmlDirectory === undefined ? undefined : ggmlBench.loadGgml(ggmlDirectory);
const shaders = new Map();
const estimates = new Map();
function launchEstimate(launch, position) {
  const kernel = kernels.getKernel(launch.kernel);
  const shape = llama.shapeAt(launch, position);
  const key = `${launch.kernel} ${JSON.stringify(shape)} ${JSON.stringify(launch.schedule)} ${launch.firstDispatch}`;
  if (estimates.has(key)) return estimates.get(key);
  const shaderKey = `${launch.kernel} ${JSON.stringify(launch.schedule)}`;
  if (!shaders.has(shaderKey))
    shaders.set(shaderKey, emitPtx(kernel.spec, launch.schedule, ptxTarget(gpu.arch)));
  const buffers = kernels.makeCaseInputs(kernel, {
    name: key,
    kernelId: launch.kernel,
    schedule: launch.schedule,
    shape,
    seed: 7,
    magnitude: 1,
  });
  const { firstDispatch } = launch;
  const result = timeShader(shaders.get(shaderKey), buffers, llama.paramsAt(launch, position), gpu, { firstDispatch }).sequence; // prettier-ignore
  estimates.set(key, result);
  return result;
}

// llama.cpp's Q4_K_M: Q6_K for attn_v and ffn_down in the first and last eighth of the layers and
// every third layer between, and for output.weight.
const moreBits = (layer, layers) =>
  layer < layers / 8 || layer >= (7 * layers) / 8 || (layer - layers / 8) % 3 === 2;
function typeOf(name, layers) {
  if (name.endsWith('_norm.weight')) return 'f32';
  if (name === 'output.weight') return 'q6_K';
  const layer = Number(/^blk\.(\d+)\./.exec(name)?.[1]);
  const more = /attn_v|ffn_down/.test(name) && moreBits(layer, layers);
  return more ? 'q6_K' : 'q4_K';
}

{
  const hparams = SHAPE_LLAMA3_8B;
  const tensors = new Map(
    llama.llamaTensorShapes(hparams).map(({ name, ne }) => {
      const type = typeOf(name, hparams.nLayer);
      return [name, { name, type, ne, bytes: new Uint8Array(0) }];
    }),
  );
  const model = { file: '8b', name: 'Llama-3-8B shape', hparams, tensors };
  const plan = llama.buildDecodePlan(model, { kv: 'f16', maxCtx: 8193 });
  // Weight bytes a token streams: every matrix and norm, but one row of token_embd.
  let weightBytes = 0;
  for (const tensor of tensors.values()) {
    const bytes = llama.tensorBytes(tensor.type, tensor.ne);
    weightBytes += tensor.name === 'token_embd.weight' ? bytes / hparams.nVocab : bytes;
  }
  const bound = weightBytes / gpu.dramBytesPerSecond;
  const ms = (seconds) => `${(seconds * 1e3).toFixed(3)} ms`;
  console.log(
    `Llama-3-8B shape (n_embd 4096, 32 layers, 32/8 heads, n_ff 14336, vocab 128256), Q4_K_M types, f16 KV, sm_90 PTX on the ${gpu.name} timing model; weight-streaming bound ${(weightBytes / 1e9).toFixed(3)} GB / ${(gpu.dramBytesPerSecond / 1e12).toFixed(1)} TB/s = ${ms(bound)} (${(1 / bound).toFixed(0)} tokens/s):`,
  );
  for (const position of [1, 1024, 8192]) {
    const byKernel = new Map();
    let total = 0;
    let dispatches = 0;
    for (const launch of plan.launches) {
      if (!llama.runsAt(launch, position)) continue;
      const sequence = launchEstimate(launch, position);
      dispatches += sequence.dispatches.length;
      total += sequence.seconds;
      byKernel.set(launch.kernel, (byKernel.get(launch.kernel) ?? 0) + sequence.seconds);
    }
    const stream = total + dispatches * gpu.launchSeconds;
    const graph = total + dispatches * gpu.graphLaunchSeconds;
    const shares = [...byKernel]
      .sort((a, b) => b[1] - a[1])
      .map(([id, seconds]) => `${id} ${((seconds / total) * 100).toFixed(1)}%`)
      .join(', ');
    console.log(
      `  position ${String(position).padStart(4)}: kernels ${ms(total)} (${((bound / total) * 100).toFixed(0)}% of the bound), ${dispatches} dispatches; stream ${ms(stream)} = ${(1 / stream).toFixed(0)} tokens/s (${((bound / stream) * 100).toFixed(0)}% of the bound), CUDA graph ${ms(graph)} = ${(1 / graph).toFixed(0)} tokens/s (${((bound / graph) * 100).toFixed(0)}%); by kernel: ${shares}`,
    );
    if (ggml === undefined) continue;
    // The same step on llama.cpp's kernels (tools/bench-ggml.mjs ggmlDecodeStep), modeled alike.
    const forgeSeconds = (kernel, shape) =>
      launchEstimate({ kernel, shape, positionOffsets: {}, paramOverrides: {}, schedule: {}, buffers: {}, firstDispatch: 0 }, position).seconds; // prettier-ignore
    const theirs = ggmlBench.ggmlDecodeStep(ggml, gpu, plan, position, forgeSeconds);
    const theirGraph = theirs.seconds + theirs.dispatches * gpu.graphLaunchSeconds;
    const theirStream = theirs.seconds + theirs.dispatches * gpu.launchSeconds;
    console.log(
      `    ggml's kernels: ${ms(theirs.seconds)}, ${theirs.dispatches} dispatches; stream ${ms(theirStream)} = ${(1 / theirStream).toFixed(0)} tokens/s, CUDA graph ${ms(theirGraph)} = ${(1 / theirGraph).toFixed(0)} tokens/s; Forge ${(theirGraph / graph).toFixed(2)}× as fast as a graph (${(theirStream / stream).toFixed(2)}× on a stream)`,
    );
  }
}

// The demo page (issue #16): its bundle's size, and its tokens/s in headless Chromium (SwiftShader)
// beside Node's Dawn (lavapipe) on the same protocol: the tiny F32 model, f32 KV, tokens 1,17,42,200
// then 12 greedy, tokens/s over steps 2–15 (step 0 builds the pipelines, step 1 is profiled).
{
  const { bundleDemo } = await import('./demo/bundle.mjs');
  const { startDemoServer } = await import('./demo/serve.mjs');
  const { chromium } = await import('playwright');
  const { bytes, gzipBytes, contributions } = await bundleDemo();
  const kB = (size) => `${(size / 1024).toFixed(1)} kB`;
  console.log(
    `demo page bundle (esbuild, minified): ${kB(bytes)}, ${kB(gzipBytes)} gzipped; ${Object.entries(
      contributions,
    )
      .map(([name, size]) => `${name} ${kB(size)}`)
      .join(', ')}`,
  );
  const model = await llama.readLlamaModel(`${models}tiny-llama-f32.gguf`);
  const decoder = await llama.openDecoder(model, { target: 'wgsl', kv: 'f32', maxCtx: 16 });
  let token = 1;
  let seconds = 0;
  for (let position = 0; position < 16; position++) {
    const input = [1, 17, 42, 200][position] ?? token;
    const result = await decoder.step(input, position);
    if (position >= 2) seconds += result.milliseconds / 1000;
    token = result.token;
  }
  decoder.close();
  const server = await startDemoServer();
  const browser = await chromium.launch({
    executablePath: '/usr/bin/chromium',
    args: [
      '--no-sandbox',
      '--enable-unsafe-webgpu',
      '--use-webgpu-adapter=swiftshader',
      '--disable-dev-shm-usage',
    ],
  });
  try {
    const page = await browser.newPage();
    await page.goto(`${server.url}?run`);
    await page.waitForFunction(() => window.forgeDemoResult !== undefined, null, {
      timeout: 300_000,
    });
    const result = await page.evaluate(() => window.forgeDemoResult);
    if (result.error !== undefined) throw new Error(`demo page: ${result.error}`);
    console.log(
      `demo page, tiny-llama-f32 f32 KV: ${result.tokensPerSecond.toFixed(1)} tokens/s in Chromium (${result.adapter}) vs ${(14 / seconds).toFixed(1)} tokens/s in Node (Dawn on lavapipe), same 16 steps`,
    );
  } finally {
    await browser.close();
    await server.close();
  }
}
