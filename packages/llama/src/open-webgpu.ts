// A WebGPU decoder for a model in one call: the plan built, a device opened, weights uploaded.
import { ready } from '@forge/ir';
import type { GpuEntry } from '@forge/wgsl/runner';
import type { LlamaModel } from './model.js';
import { buildDecodePlan, type KvCache } from './plan.js';
import { openWebGpuDecoder, type WebGpuDecoder } from './webgpu-runner.js';

/** Options of openWebGpuModel. */
export interface OpenWebGpuModelOptions {
  readonly kv: KvCache;
  /** Positions the KV cache holds; the model's context length, at most DEFAULT_MAX_CONTEXT, when omitted. */
  readonly maxCtx?: number;
  /** The position from which attention takes its long-range schedule (DecodePlanOptions). */
  readonly attentionLongFrom?: number;
  /** WGSL features to emit for and enable on the device (`f16`, `subgroups`). */
  readonly features?: readonly string[];
  /** The WebGPU entry point (a browser's `navigator.gpu`); Dawn's in Node when omitted. */
  readonly gpu?: GpuEntry;
}

/**
 * Builds `model`'s decode plan and runs it on a WebGPU device of its own (which `close` destroys).
 * Loads nothing of the CPU engines, so a page bundles only @forge/ir, @forge/wgsl and this.
 */
export async function openWebGpuModel(
  model: LlamaModel,
  options: OpenWebGpuModelOptions,
): Promise<WebGpuDecoder> {
  await ready();
  const plan = buildDecodePlan(model, {
    kv: options.kv,
    ...(options.maxCtx === undefined ? {} : { maxCtx: options.maxCtx }),
    ...(options.attentionLongFrom === undefined
      ? {}
      : { attentionLongFrom: options.attentionLongFrom }),
  });
  const features = options.features ?? [];
  const { openWebGpu } = await import('@forge/wgsl/runner');
  const context = await openWebGpu({
    features,
    ...(options.gpu === undefined ? {} : { gpu: options.gpu }),
  });
  try {
    return await openWebGpuDecoder(model, plan, context, { features });
  } catch (error) {
    context.destroy();
    throw error;
  }
}
