// Runs a decode plan on the CPU: every launch through the IR interpreter or, emitted as PTX, on the
// PTX simulator, over typed arrays that stay allocated from step to step.
import { ForgeError, interpret, resolveSchedule, type ElementArray } from '@forge/ir';
import { getKernel } from '@forge/ir/kernels';
import { PTX_LIMITS, emitPtx, ptxTarget } from '@forge/ptx';
import { simulateShaderDispatches } from '@forge/ptx/simulate';
import { initialContents } from './contents.js';
import {
  DecodeInputError,
  KernelFaultError,
  checkStep,
  type Decoder,
  type StepResult,
} from './decoder.js';
import type { LlamaModel } from './model.js';
import { paramsAt, planBytes, runsAt, type DecodePlan, type PlanLaunch } from './plan.js';

/** Runs one launch in place on its buffers with the step's params. */
type LaunchRunner = (
  buffers: Record<string, ElementArray>,
  params: Readonly<Record<string, number>>,
) => void;

function interpreterRunner(launch: PlanLaunch): LaunchRunner {
  const { spec } = getKernel(launch.kernel);
  const schedule = resolveSchedule(spec, PTX_LIMITS, launch.schedule);
  const scratchNames = new Set((spec.scratch ?? []).map((scratch) => scratch.name));
  const { firstDispatch } = launch;
  return (buffers, params) => {
    // Scratch the plan shares (quantized x) is passed as scratch; the interpreter allocates the rest.
    const own = Object.entries(buffers).filter(([name]) => !scratchNames.has(name));
    const scratch = Object.entries(buffers).filter(([name]) => scratchNames.has(name));
    const options = { schedule, params, buffers: Object.fromEntries(own) };
    if (scratch.length === 0) return void interpret(spec, options);
    void interpret(spec, { ...options, scratch: Object.fromEntries(scratch), firstDispatch });
  };
}

function simulatorRunner(launch: PlanLaunch, arch: string): LaunchRunner {
  const shader = emitPtx(getKernel(launch.kernel).spec, launch.schedule, ptxTarget(arch));
  return (buffers, params) => {
    const { firstDispatch } = launch;
    const findings = simulateShaderDispatches(shader, buffers, params, { firstDispatch }).flatMap(
      (result) => result.findings,
    );
    const [first] = findings;
    if (first !== undefined)
      throw new KernelFaultError(
        `${launch.label} (${launch.kernel}): the PTX simulator found ${findings.length} fault(s), first ${first.category} at PTX line ${first.line}: ${first.message}`,
      );
  };
}

/** Options of the CPU runners. */
export interface HostDecoderOptions {
  /** PTX architecture the simulator runs (`sm_80` when omitted). */
  readonly arch?: string;
  /** Bytes the plan's buffers may take in this process; HOST_DECODE_MAX_BYTES when omitted. */
  readonly maxBytes?: number;
}

/** What the CPU engines allocate for a plan at most (weights, activations, KV cache): 4 GiB. */
export const HOST_DECODE_MAX_BYTES = 4 * 2 ** 30;

/** A decoder running `plan` on the interpreter (`interp`) or the PTX simulator (`ptx-sim`). */
export function openHostDecoder(
  model: LlamaModel,
  plan: DecodePlan,
  target: 'interp' | 'ptx-sim',
  options: HostDecoderOptions = {},
): Decoder {
  const { total, cache } = planBytes(plan);
  const limit = options.maxBytes ?? HOST_DECODE_MAX_BYTES;
  if (total > limit)
    throw new DecodeInputError(
      `the plan's buffers need ${total} bytes, ${cache} of them the KV cache of ${plan.maxCtx} positions, over the ${limit}-byte limit of the ${target} engine; a smaller context (--ctx) needs less`,
    );
  const arrays = new Map(
    plan.buffers
      .filter((buffer) => buffer.view === undefined)
      .map((buffer) => [buffer.name, initialContents(model, plan, buffer)]),
  );
  // A view shares its buffer's memory: a subarray of it.
  for (const { name, view, length } of plan.buffers) {
    if (view === undefined) continue;
    const base = arrays.get(view.of);
    if (base === undefined)
      throw new ForgeError(`plan buffer ${name} views ${view.of}, never allocated`);
    arrays.set(name, base.subarray(view.offset, view.offset + length));
  }
  const array = (name: string): ElementArray => {
    const found = arrays.get(name);
    if (found === undefined) throw new ForgeError(`plan buffer ${name} was never allocated`);
    return found;
  };
  const launches = plan.launches.map((launch) => ({
    launch,
    buffers: Object.fromEntries(
      Object.entries(launch.buffers).map(([kernelName, planName]) => [kernelName, array(planName)]),
    ),
    run:
      target === 'interp'
        ? interpreterRunner(launch)
        : simulatorRunner(launch, options.arch ?? 'sm_80'),
  }));
  let cached = 0;
  let closed = false;
  return {
    plan,
    target,
    async step(token: number, position: number): Promise<StepResult> {
      if (closed) throw new ForgeError('the decoder is closed');
      checkStep(plan, model.hparams.nVocab, cached, token, position);
      const start = performance.now();
      array(plan.io.token)[0] = token;
      for (const { launch, buffers, run } of launches)
        if (runsAt(launch, position)) run(buffers, paramsAt(launch, position));
      cached = position + 1;
      return {
        position,
        logits: Float32Array.from(array(plan.io.logits)),
        token: array(plan.io.nextToken)[0] ?? 0,
        logit: array(plan.io.nextLogit)[0] ?? Number.NaN,
        milliseconds: performance.now() - start,
      };
    },
    close() {
      closed = true;
      arrays.clear();
    },
  };
}
