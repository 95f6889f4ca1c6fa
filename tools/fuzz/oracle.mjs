import { ForgeError, validateSpec } from '@forge/ir';
import { emitPtx, ptxTarget } from '@forge/ptx';
import { assemblePtx } from '@forge/ptx/ptxas';
import { emitWgsl, wgslTarget } from '@forge/wgsl';
import { explicitLayout, openWebGpu, wgslDiagnostics } from '@forge/wgsl/runner';
import { buildThroughApi } from './builder-replay.mjs';

// Judges one fuzz case: Forge must reject it with a one-line ForgeError, or the vendor tools
// (ptxas; Tint and pipeline creation through Dawn) must accept what Forge emitted.

/** Outcomes counted per case, most severe first; `tried` is their total. */
export const OUTCOMES = [
  'crash',
  'vendor-rejected-ptxas',
  'vendor-rejected-tint',
  'vendor-rejected-pipeline',
  'bad-message',
  'rejected',
  'accepted',
];

/** The outcomes that fail a campaign. */
export const FAILING = new Set(OUTCOMES.slice(0, 5));

const firstLine = (text) => String(text).split('\n')[0];

/** How an exception thrown by Forge code classifies: a typed one-line rejection or a crash. */
export function classifyThrow(error, stage) {
  if (error instanceof ForgeError) {
    const message = String(error.message);
    if (message.includes('\n'))
      return { outcome: 'bad-message', stage, message: JSON.stringify(message.slice(0, 300)) };
    return { outcome: 'rejected', stage, message, errorClass: error.name, length: message.length };
  }
  const where = error instanceof Error ? firstLine(error.stack?.split('\n')[1] ?? '').trim() : '';
  const text = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  return { outcome: 'crash', stage, message: `${firstLine(text)} ${where}`.trim() };
}

/** A compute pipeline with the bind group layouts the runner builds from the launch info. */
function createPipeline(device, module, shader) {
  const { pipelineLayout } = explicitLayout(device, shader.launch.bindings ?? []);
  return device.createComputePipeline({
    layout: pipelineLayout,
    compute: { module, entryPoint: shader.launch.entryPoint },
  });
}

/** Opens one Dawn device (f16 and subgroups enabled) for the whole campaign. */
export async function openOracle() {
  let context;
  let lost = true;
  const device = async () => {
    if (lost) {
      context = await openWebGpu({ features: ['shader-f16', 'subgroups'] });
      lost = false;
      context.device.lost.then(() => {
        lost = true;
      });
      context.device.onuncapturederror = () => {};
    }
    return context;
  };

  async function checkWgsl(spec, fuzzCase, results) {
    let shader;
    try {
      shader = emitWgsl(spec, fuzzCase.schedule.wgsl, wgslTarget(fuzzCase.wgslFeatures));
    } catch (error) {
      results.push({ target: 'wgsl', ...classifyThrow(error, 'emit-wgsl') });
      return;
    }
    const ctx = await device();
    const diagnostics = await wgslDiagnostics(ctx, shader.source);
    const error = diagnostics.find((d) => d.type === 'error');
    if (error !== undefined) {
      const message = `${error.line}:${error.column}: ${firstLine(error.message)}`;
      results.push({ target: 'wgsl', outcome: 'vendor-rejected-tint', stage: 'tint', message });
      return;
    }
    const { device: gpu } = ctx;
    gpu.pushErrorScope('internal');
    gpu.pushErrorScope('validation');
    let thrown;
    try {
      createPipeline(gpu, gpu.createShaderModule({ code: shader.source }), shader);
    } catch (caught) {
      thrown = caught;
    }
    const validation = await gpu.popErrorScope();
    const internal = await gpu.popErrorScope();
    const failure = validation ?? internal ?? thrown;
    if (failure !== null && failure !== undefined) {
      const message = firstLine(failure.message ?? String(failure));
      results.push({ target: 'wgsl', outcome: 'vendor-rejected-pipeline', stage: 'pipeline', message }); // prettier-ignore
      return;
    }
    results.push({ target: 'wgsl', outcome: 'accepted', stage: 'pipeline' });
  }

  function checkPtx(spec, fuzzCase, arch, results, spills) {
    let shader;
    try {
      shader = emitPtx(spec, fuzzCase.schedule.ptx, ptxTarget(arch));
    } catch (error) {
      results.push({ target: arch, ...classifyThrow(error, 'emit-ptx') });
      return;
    }
    const result = assemblePtx(shader.source, arch);
    if (!result.ok) {
      const line = result.diagnostics.split('\n').find((l) => /error/i.test(l)) ?? result.diagnostics; // prettier-ignore
      const message = firstLine(line).replace(/^.*?kernel\.ptx/, 'kernel.ptx');
      results.push({ target: arch, outcome: 'vendor-rejected-ptxas', stage: 'ptxas', message });
      return;
    }
    const spilled = result.spillStores + result.spillLoads;
    if (spilled > 0) spills.push({ arch, bytes: result.spillStores, schedule: shader.schedule });
    results.push({ target: arch, outcome: 'accepted', stage: 'ptxas' });
  }

  /**
   * `{ outcome, results, spills, validateMs, ms }`: the case's outcome is the most severe over its targets;
   * `rejected` only when validation or every emission rejected it.
   */
  async function check(fuzzCase) {
    const started = performance.now();
    const results = [];
    const spills = [];
    let spec;
    try {
      spec =
        fuzzCase.source === 'builder'
          ? buildThroughApi(fuzzCase.spec)
          : validateSpec(fuzzCase.spec);
    } catch (error) {
      results.push({ target: 'spec', ...classifyThrow(error, 'validate') });
    }
    const validateMs = performance.now() - started;
    if (spec !== undefined) {
      for (const arch of fuzzCase.ptxArchs) checkPtx(spec, fuzzCase, arch, results, spills);
      await checkWgsl(spec, fuzzCase, results);
    }
    const outcome = OUTCOMES.find((candidate) =>
      candidate === 'rejected'
        ? results.every((r) => r.outcome === 'rejected')
        : results.some((r) => r.outcome === candidate),
    );
    return { outcome, results, spills, validateMs, ms: performance.now() - started };
  }

  return {
    check,
    close: () => context?.destroy(),
  };
}
