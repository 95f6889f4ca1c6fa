import { semanticHash } from '@forge/ir';
import { CATALOG } from '@forge/ir/kernels';
import { PTX_ARCHS } from '@forge/ptx';
import { WGSL_FEATURES } from '@forge/wgsl';
import { parseCommandArgs } from '../args.js';
import { EXIT_OK, UsageError } from '../errors.js';
import type { CliIo } from '../io.js';

export const LIST_USAGE = 'forge list [--json]';

export function listCommand(args: readonly string[], io: CliIo): number {
  const parsed = parseCommandArgs(args, { json: { type: 'boolean' } }, LIST_USAGE);
  if (parsed.positionals.length > 0)
    throw new UsageError(`unexpected argument '${parsed.positionals[0]}'; usage: ${LIST_USAGE}`);
  const kernels = [...CATALOG.values()].map((kernel) => ({
    id: kernel.spec.id,
    semanticVersion: kernel.spec.semanticVersion,
    semanticHash: semanticHash(kernel.spec),
    description: kernel.spec.description,
    targets: { ptx: { archs: [...PTX_ARCHS] }, wgsl: { features: [...WGSL_FEATURES] } },
    schedule: kernel.spec.schedule.map((knob) => ({
      name: knob.name,
      default: knob.default,
      bounds: (Object.hasOwn(knob, 'bounds') ? knob.bounds : undefined) ?? {},
    })),
  }));
  if (parsed.flag('json')) {
    io.stdout(`${JSON.stringify(kernels, null, 2)}\n`);
    return EXIT_OK;
  }
  const width = Math.max(...kernels.map((kernel) => kernel.id.length));
  for (const kernel of kernels) {
    const targets = `ptx(${kernel.targets.ptx.archs.join(',')}) wgsl(features ${kernel.targets.wgsl.features.join(',')})`;
    io.stdout(
      `${kernel.id.padEnd(width)}  v${kernel.semanticVersion}  ${targets}  ${kernel.description}\n`,
    );
  }
  return EXIT_OK;
}
