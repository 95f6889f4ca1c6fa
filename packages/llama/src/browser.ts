/**
 * `@forge/llama/browser`: what a web page needs of @forge/llama, with nothing that loads Node's
 * modules or the CPU engines (the PTX simulator, the interpreter): `parseLlamaModel` for a `File`
 * or `Blob`, `buildDecodePlan`, `openWebGpuModel` (pass `gpu: navigator.gpu`), the float64
 * reference decoder. A bundle of it holds @forge/ir, @forge/wgsl and @forge/llama.
 *
 * @module @forge/llama/browser
 */
export {
  parseLlamaModel,
  ggmlTypeName,
  llamaTensorShapes,
  tensorBytes,
  ModelError,
  type LlamaHyperparameters,
  type LlamaModel,
  type LlamaTensorShape,
  type ModelTensor,
  type RopeMode,
  type TensorType,
} from './model.js';
export {
  ATTENTION_LONG_FROM,
  buildDecodePlan,
  DEFAULT_MAX_CONTEXT,
  planBytes,
  paramsAt,
  runsAt,
  shapeAt,
  GET_ROWS_KERNELS,
  MATVEC_KERNELS,
  type BufferRole,
  type DecodePlan,
  type DecodePlanOptions,
  type KvCache,
  type LaunchPositions,
  type PlanBuffer,
  type PlanLaunch,
} from './plan.js';
export { initialContents, dequantizeTensor } from './contents.js';
export {
  GGUF_LIMITS,
  readGgufHeader,
  type GgufHeader,
  type GgufMetadataValue,
  type GgufScalar,
  type GgufTensorInfo,
  type GgufValueType,
} from './gguf/gguf-header.js';
export { GGML_TYPES, type GgmlType } from './gguf/ggml-types.js';
export { NORM_TYPES, roleTypeProblem, tensorTypeOf, type TensorRole } from './tensor-roles.js';
export {
  DECODE_TARGETS,
  DecodeInputError,
  KernelFaultError,
  checkStep,
  type DecodeTarget,
  type Decoder,
  type StepResult,
} from './decoder.js';
export {
  openWebGpuDecoder,
  type LaunchTime,
  type ProfiledStep,
  type WebGpuDecoder,
  type WebGpuDecoderOptions,
} from './webgpu-runner.js';
export { openWebGpuModel, type OpenWebGpuModelOptions } from './open-webgpu.js';
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
