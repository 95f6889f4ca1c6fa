/// <reference types="webgpu" preserve="true" />
// The only module that loads Dawn (the `webgpu` package), lazily: importing the runner's types
// or the main `@forge/wgsl` entry never starts a GPU instance.
import { WEBGPU_PACKAGE_HINT, WebGpuUnavailableError } from './errors.js';

/** The part of `navigator.gpu` the runner uses (tests substitute a stub). */
export type GpuEntry = Pick<GPU, 'requestAdapter'>;

let instance: Promise<GPU> | undefined;

/** One Dawn instance per process; also installs WebGPU's globals (`GPUBufferUsage`, …). */
export function dawnGpu(): Promise<GPU> {
  instance ??= loadDawn().catch((error: unknown) => {
    instance = undefined;
    throw error;
  });
  return instance;
}

/** Explains why `import('webgpu')` failed: the optional peer is not installed, or Dawn would not load. */
export function dawnLoadError(error: unknown): WebGpuUnavailableError {
  const code = (error as { code?: unknown } | null)?.code;
  const reason = error instanceof Error ? error.message : String(error);
  if (code === 'ERR_MODULE_NOT_FOUND' && /['"]webgpu['"]/.test(reason))
    return new WebGpuUnavailableError('the package `webgpu` is not installed', {
      cause: error,
      hint: WEBGPU_PACKAGE_HINT,
    });
  return new WebGpuUnavailableError(`the webgpu package (Dawn) failed to load: ${reason}`, {
    cause: error,
  });
}

async function loadDawn(): Promise<GPU> {
  let dawn: typeof import('webgpu');
  try {
    dawn = await import('webgpu');
  } catch (error) {
    throw dawnLoadError(error);
  }
  Object.assign(globalThis, dawn.globals);
  return dawn.create([]);
}
