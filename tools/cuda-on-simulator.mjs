// The CUDA driver API calls an engine makes to launch a kernel, carried out by @forge/ptx-sim: the
// tests run docs/engines.md's CUDA example through it. It lays out the parameter block from the PTX
// entry's own `.param` declarations (CUDA's rule: each parameter at its alignment), independently
// of Forge's `launch` metadata, so a wrong offset, type or grid in the example shows up as a wrong
// result or an error here.
import { parsePtx, simulate, typeBytes } from '@forge/ptx-sim';

const CU_LAUNCH_PARAM_END = 0x00;
const CU_LAUNCH_PARAM_BUFFER_POINTER = 0x01;
const CU_LAUNCH_PARAM_BUFFER_SIZE = 0x02;

/** A fake CUDA device: device memory is host memory behind 256-byte-aligned fake addresses. */
export function cudaOnSimulator() {
  const allocations = new Map(); // base address (BigInt) -> Uint8Array
  let nextAddress = 0x7f0000000000n;
  const launches = [];

  const allocationAt = (pointer, bytes) => {
    for (const [base, memory] of allocations) {
      const offset = pointer - base;
      if (offset >= 0n && offset + BigInt(bytes) <= BigInt(memory.byteLength))
        return { memory, offset: Number(offset) };
    }
    throw new Error(
      `CUDA_ERROR_INVALID_VALUE: ${bytes} bytes at 0x${pointer.toString(16)} are not allocated`,
    );
  };

  return {
    launches,
    cuMemAlloc(bytes) {
      const base = nextAddress;
      allocations.set(base, new Uint8Array(bytes));
      nextAddress += (BigInt(bytes) + 255n) & ~255n;
      return base;
    },
    cuMemcpyHtoD(pointer, source) {
      const { memory, offset } = allocationAt(pointer, source.byteLength);
      memory.set(new Uint8Array(source.buffer, source.byteOffset, source.byteLength), offset);
    },
    cuMemcpyDtoH(target, pointer) {
      const { memory, offset } = allocationAt(pointer, target.byteLength);
      new Uint8Array(target.buffer, target.byteOffset, target.byteLength).set(
        memory.subarray(offset, offset + target.byteLength),
      );
    },
    cuModuleLoadData(image) {
      return parsePtx(image);
    },
    cuModuleGetFunction(module, name) {
      const entry = module.entries.find((candidate) => candidate.name === name);
      if (entry === undefined)
        throw new Error(`CUDA_ERROR_NOT_FOUND: no entry '${name}' in the module`);
      return { module, entry };
    },
    cuLaunchKernel(
      kernel,
      gridX,
      gridY,
      gridZ,
      blockX,
      blockY,
      blockZ,
      sharedMemBytes,
      stream,
      kernelParams,
      extra,
    ) {
      if (kernelParams !== null)
        throw new Error('this fake driver takes parameters through `extra` only');
      const options = new Map();
      for (let index = 0; extra[index] !== CU_LAUNCH_PARAM_END; index += 2)
        options.set(extra[index], extra[index + 1]);
      const block = new DataView(options.get(CU_LAUNCH_PARAM_BUFFER_POINTER));
      const blockBytes = options.get(CU_LAUNCH_PARAM_BUFFER_SIZE);
      const args = {};
      let offset = 0;
      for (const param of kernel.entry.params) {
        const size = typeBytes(param.type) * (param.length ?? 1);
        offset = Math.ceil(offset / param.align) * param.align;
        if (offset + size > blockBytes)
          throw new Error(
            `CUDA_ERROR_INVALID_VALUE: parameter block of ${blockBytes} bytes ends before '${param.name}'`,
          );
        const bytes = new Uint8Array(block.buffer.slice(offset, offset + size));
        const pointer = size === 8 ? block.getBigUint64(offset, true) : undefined;
        args[param.name] =
          pointer !== undefined && allocations.has(pointer)
            ? { kind: 'buffer', bytes: allocations.get(pointer) }
            : { kind: 'bytes', bytes };
        offset += size;
      }
      const result = simulate(kernel.module, {
        entry: kernel.entry.name,
        grid: [gridX, gridY, gridZ],
        block: [blockX, blockY, blockZ],
        args,
      });
      launches.push({
        grid: [gridX, gridY, gridZ],
        block: [blockX, blockY, blockZ],
        sharedMemBytes,
        stream,
        result,
      });
      if (result.findings.length > 0)
        throw new Error(
          `the simulator's sanitizer: ${result.findings.length} finding(s), first: ${JSON.stringify(result.findings[0])}`,
        );
    },
  };
}
