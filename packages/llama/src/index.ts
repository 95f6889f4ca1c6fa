/**
 * `@forge/llama`: runs a Llama-architecture GGUF model token by token as a chain of Forge catalog
 * kernels. `readLlamaModel` reads the file, `buildDecodePlan` turns it into one step as data (the
 * buffers and the kernel launches, each matmul's kernel chosen by its tensor's type), and
 * `openDecoder` runs that plan on WebGPU, on the PTX simulator or on the IR interpreter. Everything
 * of `@forge/llama/browser` is here too.
 *
 * @module @forge/llama
 */
export * from './browser.js';
export { readLlamaModel, readFileBytes, readGgufFileHeader } from './read-model.js';
export { HOST_DECODE_MAX_BYTES, openHostDecoder, type HostDecoderOptions } from './host-runner.js';
export { openDecoder, type OpenDecoderOptions } from './open-decoder.js';
