/**
 * `@forge/llama`: runs a Llama-architecture GGUF model token by token as a chain of Forge catalog
 * kernels. `readLlamaModel` reads the file, `buildDecodePlan` turns it into one step as data (the
 * buffers and the kernel launches, each matmul's kernel chosen by its tensor's type), and
 * `openDecoder` runs that plan on WebGPU, on the PTX simulator or on the IR interpreter.
 *
 * @module @forge/llama
 */
export { readLlamaModel, readFileBytes } from './read-model.js';
export {
  parseLlamaModel,
  ggmlTypeName,
  llamaTensorShapes,
  tensorBytes,
  ModelError,
  type LlamaHyperparameters,
  type LlamaModel,
  type ModelTensor,
  type RopeMode,
  type TensorType,
} from './model.js';
export {
  buildDecodePlan,
  paramsAt,
  shapeAt,
  GET_ROWS_KERNELS,
  MATVEC_KERNELS,
  type BufferRole,
  type DecodePlan,
  type DecodePlanOptions,
  type KvCache,
  type PlanBuffer,
  type PlanLaunch,
} from './plan.js';
export { initialContents, dequantizeTensor } from './contents.js';
export {
  DECODE_TARGETS,
  DecodeInputError,
  KernelFaultError,
  checkStep,
  type DecodeTarget,
  type Decoder,
  type StepResult,
} from './decoder.js';
export { openHostDecoder, type HostDecoderOptions } from './host-runner.js';
export { openWebGpuDecoder, type WebGpuDecoderOptions } from './webgpu-runner.js';
export { openDecoder, type OpenDecoderOptions } from './open-decoder.js';
export {
  createReferenceDecoder,
  referenceMatVec,
  referenceRmsNorm,
  referenceRope,
  validateReferenceModel,
  type ReferenceDecoder,
  type ReferenceDecoderOptions,
  type ReferenceHyperparameters,
  type ReferenceKv,
  type ReferenceLayer,
  type ReferenceModel,
} from './reference-decoder.js';
export { dequantizedModel } from './reference-model.js';
export { BUILD_INFO as LLAMA_PACKAGE } from './build-info.js';
