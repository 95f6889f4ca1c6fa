// Launches a kernel from `forge emit <id> --target ptx --arch sm_XX --json` through the CUDA driver
// API, using nothing but the JSON. `cuda` is the engine's binding of the driver API: each call below
// is the C function of the same name with the same arguments, so the code reads as the C it stands for.
import { evaluateSizeExpression } from '@forge/ir';

// cuLaunchKernel's `extra` keys (cuda.h): hand the kernel one packed parameter block.
export const CU_LAUNCH_PARAM_END = 0x00;
export const CU_LAUNCH_PARAM_BUFFER_POINTER = 0x01;
export const CU_LAUNCH_PARAM_BUFFER_SIZE = 0x02;

/**
 * `shader` is the parsed JSON; `devicePointers` maps each buffer's name to its CUdeviceptr (a
 * BigInt from cuMemAlloc), `params` each scalar param's name to its value.
 */
export function launchOnCuda(cuda, shader, devicePointers, params, stream = 0) {
  const { launch } = shader;
  const module = cuda.cuModuleLoadData(shader.source); // the driver JIT-compiles the PTX text
  const kernel = cuda.cuModuleGetFunction(module, launch.entryPoint);

  // The parameter block: every buffer address and scalar at its byte offset, little-endian.
  const block = new DataView(new ArrayBuffer(launch.parameterBytes));
  for (const { name, kind, type, offset } of launch.parameters) {
    const value = kind === 'buffer' ? devicePointers[name] : params[name];
    if (type === 'u64') block.setBigUint64(offset, BigInt(value), true);
    else if (type === 'f32') block.setFloat32(offset, value, true);
    else if (type === 'i32') block.setInt32(offset, value, true);
    else block.setUint32(offset, value, true);
  }

  // The grid is size expressions over the params; shared memory is declared in the PTX (static),
  // so no dynamic shared bytes are passed (launch.sharedBytes says how much it declares).
  const [gridX, gridY, gridZ] = launch.grid.map((expression) =>
    evaluateSizeExpression(expression, params),
  );
  const [blockX, blockY, blockZ] = launch.workgroupSize;
  const extra = [
    CU_LAUNCH_PARAM_BUFFER_POINTER,
    block.buffer,
    CU_LAUNCH_PARAM_BUFFER_SIZE,
    block.byteLength,
    CU_LAUNCH_PARAM_END,
  ];
  cuda.cuLaunchKernel(kernel, gridX, gridY, gridZ, blockX, blockY, blockZ, 0, stream, null, extra);
}
