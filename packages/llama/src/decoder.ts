// What every runner offers: a decoder holding its buffers and KV cache, one `step` per token.
import { ForgeError } from '@forge/ir';
import type { DecodePlan } from './plan.js';

/** The engines a plan runs on: the IR interpreter, the PTX simulator, WebGPU (Dawn). */
export type DecodeTarget = 'interp' | 'ptx-sim' | 'wgsl';

/** The decode targets, in the order `forge decode --help` lists them. */
export const DECODE_TARGETS: readonly DecodeTarget[] = ['wgsl', 'ptx-sim', 'interp'];

/** What one step produced. */
export interface StepResult {
  readonly position: number;
  /** The logits over the vocabulary (the plan's `logits` buffer after the step). */
  readonly logits: Float32Array;
  /**
   * The argmax token and its logit, as the `argmax` kernel found them: the lowest index of a NaN
   * logit if there is one, else the lowest of the largest (`argmaxIndex` of `@forge/ir/kernels`).
   */
  readonly token: number;
  readonly logit: number;
  /** Wall time of the step: on WebGPU from submission until the results are mapped. */
  readonly milliseconds: number;
}

/** A model ready to decode on one target, its weights loaded and its KV cache empty. */
export interface Decoder {
  readonly plan: DecodePlan;
  readonly target: DecodeTarget;
  /**
   * Runs the step for `token` at `position`, which must be at most the number of positions cached
   * (a smaller one rewinds) and below the plan's maxCtx; the cache keeps its k and v afterwards.
   */
  step(token: number, position: number): Promise<StepResult>;
  /** Releases the target's resources (the WebGPU device); the decoder cannot be used afterwards. */
  close(): void;
}

/** A token or position the decoder cannot take; names the argument. */
export class DecodeInputError extends ForgeError {
  override readonly name = 'DecodeInputError';
}

/** Checks a step's token and position against the vocabulary, the cache and maxCtx. */
export function checkStep(
  plan: DecodePlan,
  nVocab: number,
  cached: number,
  token: number,
  position: number,
): void {
  if (!Number.isSafeInteger(token) || token < 0 || token >= nVocab)
    throw new DecodeInputError(
      `token: ${token} is not a token id below the vocabulary's ${nVocab}`,
    );
  if (!Number.isSafeInteger(position) || position < 0 || position > cached)
    throw new DecodeInputError(
      `position: ${position} is not from 0 to ${cached}, the positions cached`,
    );
  if (position >= plan.maxCtx)
    throw new DecodeInputError(
      `position: ${position} is past the cache's ${plan.maxCtx} positions`,
    );
}

/**
 * A kernel of the step misbehaved while running (the PTX simulator's sanitizer found a fault): a
 * failed check, not a user's mistake, so not a ForgeError.
 */
export class KernelFaultError extends Error {
  override readonly name = 'KernelFaultError';
}
