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
 * BigInt from cuMemAlloc), `params` each scalar param's name to its value. A kernel of several
 * dispatches (`launch.dispatches`) runs them in order on the stream, over scratch buffers this
 * allocates (`launch.scratch`); their pointers are returned, for cuMemFree once the stream is done.
 */
export function launchOnCuda(cuda, shader, devicePointers, params, stream = 0) {
  const { launch } = shader;
  const module = cuda.cuModuleLoadData(shader.source); // the driver JIT-compiles the PTX text

  // Scratch: what one dispatch hands the next, sized by expressions over the params.
  const scratch = {};
  for (const { name, bytes } of launch.scratch ?? [])
    scratch[name] = cuda.cuMemAlloc(evaluateSizeExpression(bytes, params));

  // The parameter block: every buffer address and scalar at its byte offset, little-endian.
  const block = new DataView(new ArrayBuffer(launch.parameterBytes));
  for (const { name, kind, type, offset } of launch.parameters) {
    const value =
      kind === 'scalar' ? params[name] : kind === 'scratch' ? scratch[name] : devicePointers[name];
    if (type === 'u64') block.setBigUint64(offset, BigInt(value), true);
    else if (type === 'f32') block.setFloat32(offset, value, true);
    else if (type === 'i32') block.setInt32(offset, value, true);
    else block.setUint32(offset, value, true);
  }
  const extra = [
    CU_LAUNCH_PARAM_BUFFER_POINTER,
    block.buffer,
    CU_LAUNCH_PARAM_BUFFER_SIZE,
    block.byteLength,
    CU_LAUNCH_PARAM_END,
  ];

  // Each dispatch is an entry of the module, launched in order on one stream (each waits for the
  // last). Grids are size expressions over the params; shared memory is declared in the PTX
  // (static), so no dynamic shared bytes are passed (sharedBytes says how much it declares).
  for (const dispatch of launch.dispatches ?? [launch]) {
    const kernel = cuda.cuModuleGetFunction(module, dispatch.entryPoint);
    const [gridX, gridY, gridZ] = dispatch.grid.map((expression) =>
      evaluateSizeExpression(expression, params),
    );
    const [blockX, blockY, blockZ] = dispatch.workgroupSize;
    cuda.cuLaunchKernel(
      kernel,
      gridX,
      gridY,
      gridZ,
      blockX,
      blockY,
      blockZ,
      0,
      stream,
      null,
      extra,
    );
  }
  return scratch;
}
