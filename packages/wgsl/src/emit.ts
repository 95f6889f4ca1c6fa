import {
  ValidationError,
  evaluateSizeExpression,
  formatSchedule,
  generatedShader,
  resolveSchedule,
  semanticHash,
  usesWarpOps,
  validateSpec,
  type GeneratedShader,
  type KernelSpec,
} from '@forge/ir';
import { wgslLaunchInfo } from './launch.js';
import { legalizeForWgsl, requireF16Feature, requireUniformWarpOps } from './legalize/index.js';
import { vectorBufferWidths } from './legalize/vector-buffers.js';
import { DOT4_I8_EXTENSION } from './ops/arithmetic.js';
import { wgslType } from './ops/types.js';
import { WARP_SCRATCH } from './ops/warp.js';
import {
  PARAMS_STRUCT,
  PARAMS_VARIABLE,
  WgslBodyWriter,
  bufferName,
  sharedName,
} from './render-body.js';
import { WGSL_LIMITS, checkWgslTarget, hasFeature, type WgslTarget } from './targets.js';
import { BUILD_INFO } from './build-info.js';

/** Name and version of this backend; part of every cache key. */
export const WGSL_BACKEND = `${BUILD_INFO.name}@${BUILD_INFO.version}`;

const GENERATED_NAME = /^(buf_|wg_|v_|forge_|ForgeParams$)/;

/**
 * Renders a KernelSpec to a WGSL compute shader. The spec and schedule are validated against the
 * kernel's `wgsl` bounds and WGSL_LIMITS first (ValidationError); f16 without the `f16` feature, or warp operations in
 * non-uniform control flow, are an UnsupportedError. Same input, same bytes, in any process.
 */
export function emitWgsl(
  specInput: unknown,
  scheduleOverrides: Readonly<Record<string, number>>,
  targetInput: WgslTarget,
): GeneratedShader<WgslTarget> {
  // Spec and target are read once, into snapshots; nothing below reads the caller's objects.
  const spec: KernelSpec = validateSpec(specInput);
  const target = checkWgslTarget(targetInput);
  if (GENERATED_NAME.test(spec.entryPoint)) {
    throw new ValidationError([
      {
        path: 'entryPoint',
        message: `'${spec.entryPoint}' collides with names the WGSL backend generates (buf_, wg_, v_, forge_ prefixes)`,
      },
    ]);
  }
  const schedule = resolveSchedule(spec, WGSL_LIMITS, scheduleOverrides);
  const workgroupSize = evaluateSizeExpression(spec.launch.workgroupSize, schedule);
  const body = legalizeForWgsl(spec, schedule, workgroupSize);
  const usesF16 = requireF16Feature(spec, body, target);
  const warpOps = usesWarpOps(body);
  if (warpOps) requireUniformWarpOps(spec, target);
  const subgroups = warpOps && hasFeature(target, 'subgroups');
  const scratchBytes = warpOps ? 4 * workgroupSize : 0;
  const requiredFeatures = [
    ...(usesF16 ? ['shader-f16'] : []),
    ...(subgroups ? ['subgroups'] : []),
  ];
  const launch = wgslLaunchInfo(spec, schedule, scratchBytes, requiredFeatures);
  if (launch.sharedBytes > WGSL_LIMITS.maxSharedBytes) {
    throw new ValidationError([
      {
        path: 'shared',
        message: `${launch.sharedBytes} bytes of workgroup memory (incl. ${scratchBytes} for warp exchange) exceed ${WGSL_LIMITS.maxSharedBytes}`,
      },
    ]);
  }

  const vectorBuffers = vectorBufferWidths(spec, body);
  const writer = new WgslBodyWriter(spec, subgroups, vectorBuffers);
  writer.block(body);
  const hash = semanticHash(spec);
  const paramsBinding = launch.bindings?.find((binding) => binding.kind === 'params');
  const sections: string[][] = [
    [
      ...(usesF16 ? ['enable f16;'] : []),
      ...(subgroups ? ['enable subgroups;'] : []),
      // Optional in Dawn, but it makes an implementation without the builtin say so up front.
      ...(writer.usesDot4I8 ? [`requires ${DOT4_I8_EXTENSION};`] : []),
    ],
    spec.params.length === 0
      ? []
      : [
          `struct ${PARAMS_STRUCT} {`,
          ...spec.params.map((param) => `  ${param.name}: ${wgslType(param.type)},`),
          '}',
        ],
    [
      ...spec.buffers.map((buffer) => {
        const width = vectorBuffers.get(buffer.name);
        const element = wgslType(buffer.element);
        const stored = width === undefined ? element : `vec${width}<${element}>`;
        return `@group(${buffer.group}) @binding(${buffer.binding}) var<storage, ${buffer.access === 'read_write' ? 'read_write' : 'read'}> ${bufferName(buffer.name)}: array<${stored}>;`;
      }),
      ...(paramsBinding === undefined
        ? []
        : [
            `@group(0) @binding(${paramsBinding.binding}) var<uniform> ${PARAMS_VARIABLE}: ${PARAMS_STRUCT};`,
          ]),
    ],
    [
      ...spec.shared.map(
        (array) =>
          `var<workgroup> ${sharedName(array.name)}: array<${wgslType(array.element)}, ${evaluateSizeExpression(array.length, schedule)}>;`,
      ),
      ...(warpOps ? [`var<workgroup> ${WARP_SCRATCH}: array<u32, ${workgroupSize}>;`] : []),
    ],
  ];
  const declarations = sections
    .filter((section) => section.length > 0)
    .flatMap((section) => ['', ...section]);
  const builtins = [
    '@builtin(local_invocation_index) local_index: u32',
    '@builtin(workgroup_id) workgroup_id: vec3<u32>',
    '@builtin(num_workgroups) num_workgroups: vec3<u32>',
    ...(subgroups ? ['@builtin(subgroup_size) subgroup_size: u32'] : []),
  ];
  const source = [
    `// Generated by Forge from KernelSpec '${spec.id}' v${spec.semanticVersion}. Do not edit.`,
    `// ${spec.description}`,
    `// semantic hash ${hash}`,
    `// schedule ${formatSchedule(schedule)}; features ${target.features.join(',') || 'none'}`,
    ...declarations,
    '',
    `@compute @workgroup_size(${workgroupSize})`,
    `fn ${spec.entryPoint}(`,
    ...builtins.map((builtin) => `  ${builtin},`),
    ') {',
    ...writer.lines,
    '}',
    '',
  ].join('\n');

  return generatedShader(spec, {
    backend: WGSL_BACKEND,
    target,
    schedule,
    source,
    launch,
    semanticHash: hash,
  });
}
