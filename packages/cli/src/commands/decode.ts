// `forge decode`: a Llama GGUF model run token by token as a chain of Forge kernels.
import { resolve } from 'node:path';
import { normalizedMse } from '@forge/ir/kernels';
import {
  DECODE_TARGETS,
  DEFAULT_MAX_CONTEXT,
  KernelFaultError,
  createReferenceDecoder,
  dequantizedModel,
  openDecoder,
  readLlamaModel,
  type StepResult,
} from '@forge/llama';
import { parseCommandArgs } from '../args.js';
import { EXIT_CHECK_FAILED, EXIT_OK, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';
import { planOutput, writeOutputs } from '../output.js';
import { oneLine } from '../error-line.js';
import { targetFromArgs } from './emit.js';

export const DECODE_USAGE =
  'forge decode MODEL.gguf --tokens ID,ID,... --target wgsl|ptx-sim|interp [--kv f16|f32] [--generate N] [--ctx N] [--arch sm_XX] [--features f16,subgroups] [--reference] [--logits FILE] [--json]';

/** Seconds between progress lines on standard error during a long run. */
const PROGRESS_SECONDS = 2;

function parseTokens(text: string | undefined): number[] {
  if (text === undefined) throw new UsageError(`--tokens is required; usage: ${DECODE_USAGE}`);
  if (!/^\d{1,9}(,\d{1,9})*$/.test(text))
    throw new UsageError(`--tokens: '${text}' is not a comma-separated list of token ids`);
  return text.split(',').map(Number);
}

function count(option: string, text: string | undefined, least: number): number | undefined {
  if (text === undefined) return undefined;
  if (!/^\d{1,9}$/.test(text) || Number(text) < least)
    throw new UsageError(`${option}: '${text}' is not a whole number from ${least}`);
  return Number(text);
}

const seconds = (milliseconds: number) => `${(milliseconds / 1000).toFixed(2)} s`;

/** Runs the model over --tokens, then greedily for --generate more, printing each step. */
export async function decodeCommand(args: readonly string[], io: CliIo): Promise<number> {
  const parsed = parseCommandArgs(
    args,
    {
      target: { type: 'string' },
      arch: { type: 'string' },
      features: { type: 'string' },
      tokens: { type: 'string' },
      kv: { type: 'string' },
      generate: { type: 'string' },
      ctx: { type: 'string' },
      logits: { type: 'string' },
      json: { type: 'boolean' },
      reference: { type: 'boolean' },
    },
    DECODE_USAGE,
  );
  const [file, ...extra] = parsed.positionals;
  if (file === undefined || extra.length > 0)
    throw new UsageError(`expected one GGUF model file; usage: ${DECODE_USAGE}`);
  const targetName = parsed.string('target');
  const target = DECODE_TARGETS.find((name) => name === targetName);
  if (target === undefined)
    throw new UsageError(
      `--target: ${targetName === undefined ? 'missing' : `'${targetName}' is not a decode target`} (one of ${DECODE_TARGETS.join(', ')})`,
    );
  // --arch and --features are checked as `forge run` checks them, for the target they apply to.
  const backend = targetFromArgs(parsed, target === 'wgsl' ? 'wgsl' : 'ptx');
  if (target === 'interp' && (parsed.string('arch') ?? parsed.string('features')) !== undefined)
    throw new UsageError('--arch and --features apply to --target ptx-sim and wgsl only');
  const kv = parsed.string('kv') ?? 'f16';
  if (kv !== 'f16' && kv !== 'f32') throw new UsageError(`--kv: '${kv}' is not f16 or f32`);
  const tokens = parseTokens(parsed.string('tokens'));
  const generate = count('--generate', parsed.string('generate'), 0) ?? 0;
  const ctx = count('--ctx', parsed.string('ctx'), 1);
  const logitsPath = parsed.string('logits');
  const logitsOutput =
    logitsPath === undefined ? undefined : planOutput('--logits', logitsPath, io.cwd);
  const json = parsed.flag('json');

  const model = await readLlamaModel(resolve(io.cwd, file));
  const p = model.hparams;
  const bad = tokens.findIndex((token) => token >= p.nVocab);
  if (bad >= 0)
    throw new UsageError(
      `--tokens: token ${tokens[bad]} (id ${bad + 1} of ${tokens.length}) is not below the vocabulary's ${p.nVocab}`,
    );
  const steps = tokens.length + generate;
  const maxCtx = ctx ?? Math.min(p.contextLength, DEFAULT_MAX_CONTEXT);
  if (steps > maxCtx)
    throw new UsageError(
      `--generate: ${tokens.length} tokens + ${generate} generated need ${steps} positions; the cache holds ${maxCtx}${ctx === undefined ? ` (the model's context_length ${p.contextLength}, at most ${DEFAULT_MAX_CONTEXT}; see --ctx)` : ' (--ctx)'}`,
    );
  const decoder = await openDecoder(model, {
    target,
    kv,
    maxCtx,
    ...(backend.kind === 'ptx' && target === 'ptx-sim' ? { arch: backend.arch } : {}),
    ...(backend.kind === 'wgsl' ? { features: backend.features } : {}),
  });
  // The float64 reference on the dequantized weights, stepped beside the kernels (not timed).
  const reference = parsed.flag('reference')
    ? createReferenceDecoder(dequantizedModel(model), { kv })
    : undefined;
  const results: StepResult[] = [];
  const errors: number[] = [];
  let referenceMilliseconds = 0;
  const start = performance.now();
  let lastProgress = start;
  try {
    let next = tokens[0] ?? 0;
    for (let position = 0; position < steps; position++) {
      const input = position < tokens.length ? (tokens[position] ?? 0) : next;
      const result = await decoder.step(input, position);
      results.push(result);
      next = result.token;
      if (reference !== undefined) {
        const before = performance.now();
        errors.push(normalizedMse(result.logits, reference.step(input, position)));
        referenceMilliseconds += performance.now() - before;
      }
      const error = errors[position];
      const nmse = error === undefined ? '' : `  nmse ${error.toExponential(2)}`;
      if (!json)
        io.stdout(
          `pos ${String(position).padStart(4)}  token ${String(input).padStart(6)}  → argmax ${String(result.token).padStart(6)}  logit ${result.logit.toFixed(4)}${nmse}\n`,
        );
      const now = performance.now() - referenceMilliseconds;
      if (now - lastProgress >= PROGRESS_SECONDS * 1000 && position + 1 < steps) {
        lastProgress = now;
        const each = (now - start) / (position + 1);
        io.stderr(
          `forge decode: ${position + 1}/${steps} steps, ${seconds(each)} a step, about ${seconds(each * (steps - position - 1))} left\n`,
        );
      }
    }
  } catch (error) {
    if (!(error instanceof KernelFaultError)) throw error;
    io.stderr(`forge decode: ${oneLine(error.message)}\n`);
    return EXIT_CHECK_FAILED;
  } finally {
    decoder.close();
  }
  const total = performance.now() - referenceMilliseconds - start;
  const worst = errors.length === 0 ? undefined : Math.max(...errors);
  const tokensPerSecond = (steps * 1000) / total;
  // The first WebGPU step also builds the pipelines, so steady-state time leaves it out.
  const later = results.slice(1);
  const stepMilliseconds =
    later.length === 0
      ? total
      : later.reduce((sum, result) => sum + result.milliseconds, 0) / later.length;
  if (logitsOutput !== undefined) {
    const logits = new Float32Array(steps * p.nVocab);
    results.forEach((result, step) => logits.set(result.logits, step * p.nVocab));
    writeOutputs([{ output: logitsOutput, data: new Uint8Array(logits.buffer) }]);
  }
  const generated = results.slice(tokens.length - 1).map((result) => result.token);
  if (json) {
    io.stdout(
      `${JSON.stringify({
        model: model.name,
        file,
        target,
        kv,
        hparams: p,
        steps: results.map((result, position) => ({
          position,
          token: position < tokens.length ? tokens[position] : results[position - 1]?.token,
          argmax: result.token,
          logit: result.logit,
          milliseconds: result.milliseconds,
          ...(errors[position] === undefined ? {} : { nmse: errors[position] }),
        })),
        ...(worst === undefined ? {} : { maxNmse: worst }),
        generated: generated.slice(0, generate),
        seconds: total / 1000,
        tokensPerSecond,
        ...(target === 'wgsl' ? { millisecondsPerStep: stepMilliseconds } : {}),
      })}\n`,
    );
    return EXIT_OK;
  }
  if (generate > 0) io.stdout(`generated: ${generated.slice(0, generate).join(' ')}\n`);
  if (worst !== undefined)
    io.stdout(
      `logits against the float64 reference on the dequantized weights: max NMSE ${worst.toExponential(2)} over ${steps} steps\n`,
    );
  const perStep =
    target === 'wgsl'
      ? `; ${stepMilliseconds.toFixed(1)} ms a step after the first (${seconds(results[0]?.milliseconds ?? 0)}, building pipelines)`
      : '';
  io.stdout(
    `${steps} steps on ${target} in ${seconds(total)}: ${tokensPerSecond.toFixed(2)} tokens/s${perStep}\n`,
  );
  return EXIT_OK;
}
