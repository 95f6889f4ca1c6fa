import {
  launchGeometry,
  validateSpec,
  type KernelSpec,
  type LaunchInfo,
  type LaunchParameter,
  type Schedule,
} from '@forge/ir';
import { paramSymbol } from './render-body.js';

/** The `.param` block in order: buffers (64-bit global addresses), then scalars, each naturally aligned. */
export function ptxLaunchParameters(specInput: KernelSpec): {
  parameters: LaunchParameter[];
  bytes: number;
} {
  const spec = validateSpec(specInput);
  let offset = 0;
  const place = (size: number): number => {
    offset = Math.ceil(offset / size) * size;
    const at = offset;
    offset += size;
    return at;
  };
  const parameters: LaunchParameter[] = [
    ...spec.buffers.map((buffer): LaunchParameter => ({
      name: buffer.name,
      kind: 'buffer',
      sourceName: paramSymbol(buffer.name),
      type: 'u64',
      offset: place(8),
      size: 8,
      align: 8,
      element: buffer.element,
      access: buffer.access,
    })),
    ...spec.params.map((param): LaunchParameter => ({
      name: param.name,
      kind: 'scalar',
      sourceName: paramSymbol(param.name),
      type: param.type,
      offset: place(4),
      size: 4,
      align: 4,
    })),
  ];
  return { parameters, bytes: Math.ceil(offset / 8) * 8 };
}

/** Launch metadata: schedule knobs bound into the grid expressions, which keep only param names. */
export function ptxLaunchInfo(specInput: KernelSpec, schedule: Schedule): LaunchInfo {
  const spec = validateSpec(specInput);
  const { parameters, bytes } = ptxLaunchParameters(spec);
  return { ...launchGeometry(spec, schedule), parameters, parameterBytes: bytes };
}
