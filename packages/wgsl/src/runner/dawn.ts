/// <reference types="webgpu" preserve="true" />
// The only module that loads Dawn (the `webgpu` package), lazily: importing the runner's types
// or the main `@forge/wgsl` entry never starts a GPU instance.
import { WebGpuUnavailableError } from './errors.js';

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

async function loadDawn(): Promise<GPU> {
  let dawn: typeof import('webgpu');
  try {
    dawn = await import('webgpu');
  } catch (error) {
    const reason = error instanceof Error ? error.message : String(error);
    throw new WebGpuUnavailableError(`the webgpu package (Dawn) failed to load: ${reason}`, {
      cause: error,
    });
  }
  Object.assign(globalThis, dawn.globals);
  return dawn.create([]);
}
