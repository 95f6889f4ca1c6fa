import {
  launchGeometry,
  validateSpec,
  type KernelSpec,
  type LaunchBinding,
  type LaunchInfo,
  type LaunchParameter,
  type Schedule,
} from '@forge/ir';
import { PARAMS_VARIABLE, bufferName } from './render-body.js';

/** The params struct binding sits in group 0, after the highest binding the spec's buffers use there. */
export function paramsBinding(specInput: KernelSpec): number {
  const spec = validateSpec(specInput);
  return spec.buffers
    .filter((buffer) => buffer.group === 0)
    .reduce((next, buffer) => Math.max(next, buffer.binding + 1), 0);
}

/**
 * Launch metadata for WGSL: bindings (buffers, then the uniform params struct), the struct's members
 * with byte offsets (every member is a 4-byte scalar, so offset = 4 * index; size padded to 16).
 */
export function wgslLaunchInfo(
  specInput: KernelSpec,
  schedule: Schedule,
  extraSharedBytes: number,
  requiredFeatures: readonly string[],
): LaunchInfo {
  const spec = validateSpec(specInput);
  const parameters = spec.params.map((param, index): LaunchParameter => ({
    name: param.name,
    kind: 'scalar',
    sourceName: param.name,
    type: param.type,
    offset: 4 * index,
    size: 4,
    align: 4,
  }));
  const bindings: LaunchBinding[] = spec.buffers.map((buffer) => ({
    group: buffer.group,
    binding: buffer.binding,
    name: buffer.name,
    kind: 'buffer',
    sourceName: bufferName(buffer.name),
    // WGSL uniform arrays need 16-byte strides, so a spec's uniform buffer binds as read-only storage.
    access: buffer.access === 'read_write' ? 'read_write' : 'read',
    element: buffer.element,
  }));
  if (spec.params.length > 0) {
    bindings.push({
      group: 0,
      binding: paramsBinding(spec),
      name: 'params',
      kind: 'params',
      sourceName: PARAMS_VARIABLE,
      access: 'uniform',
    });
  }
  const geometry = launchGeometry(spec, schedule);
  return {
    ...geometry,
    sharedBytes: geometry.sharedBytes + extraSharedBytes,
    parameters,
    parameterBytes: Math.ceil((4 * spec.params.length) / 16) * 16,
    bindings,
    requiredFeatures,
  };
}
