// A decoder for a model on any target: the plan built, the weights loaded, the cache empty.
import { ready } from '@forge/ir';
import type { GpuEntry } from '@forge/wgsl/runner';
import type { DecodeTarget, Decoder } from './decoder.js';
import { openHostDecoder } from './host-runner.js';
import type { LlamaModel } from './model.js';
import { openWebGpuModel } from './open-webgpu.js';
import { buildDecodePlan, type KvCache } from './plan.js';

/** Options of openDecoder. */
export interface OpenDecoderOptions {
  readonly target: DecodeTarget;
  readonly kv: KvCache;
  /** Positions the KV cache holds; the model's context length, at most DEFAULT_MAX_CONTEXT, when omitted. */
  readonly maxCtx?: number;
  /** The position from which attention takes its long-range schedule (DecodePlanOptions). */
  readonly attentionLongFrom?: number;
  /** ptx-sim: the PTX architecture to emit and simulate (`sm_80` when omitted). */
  readonly arch?: string;
  /** wgsl: WGSL features to emit for and enable on the device (`f16`, `subgroups`). */
  readonly features?: readonly string[];
  /** wgsl: the WebGPU entry point (a browser's `navigator.gpu`); Dawn's in Node when omitted. */
  readonly gpu?: GpuEntry;
}

/**
 * Builds `model`'s decode plan and opens a decoder for it on `options.target`. WebGPU (loaded only
 * for `wgsl`) opens its own device, which `close` destroys. Awaits @forge/ir's `ready()` first, since
 * emitting a kernel hashes it.
 */
export async function openDecoder(
  model: LlamaModel,
  options: OpenDecoderOptions,
): Promise<Decoder> {
  await ready();
  const { target, kv, maxCtx, attentionLongFrom, arch, features, gpu } = options;
  const planOptions = {
    kv,
    ...(maxCtx === undefined ? {} : { maxCtx }),
    ...(attentionLongFrom === undefined ? {} : { attentionLongFrom }),
  };
  if (target === 'wgsl')
    return openWebGpuModel(model, {
      ...planOptions,
      ...(features === undefined ? {} : { features }),
      ...(gpu === undefined ? {} : { gpu }),
    });
  const plan = buildDecodePlan(model, planOptions);
  return openHostDecoder(model, plan, target, arch === undefined ? {} : { arch });
}
