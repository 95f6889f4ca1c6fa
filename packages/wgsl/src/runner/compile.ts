/// <reference types="webgpu" preserve="true" />
import type { WebGpuContext } from './context.js';
import { WebGpuError, WgslCompileError, type WgslDiagnostic } from './errors.js';

/** A compiled module and the warnings (and notes) Tint gave for it. */
export interface CompiledWgsl {
  readonly module: GPUShaderModule;
  readonly warnings: readonly WgslDiagnostic[];
}

interface ModuleVerdict {
  readonly module: GPUShaderModule;
  readonly diagnostics: WgslDiagnostic[];
  /** A validation error WebGPU raised that the compilation info did not explain. */
  readonly deviceError: GPUError | null;
}

async function createModule(context: WebGpuContext, source: string): Promise<ModuleVerdict> {
  const { device } = context;
  // The scope keeps Dawn from reporting the error as uncaptured; getCompilationInfo says where.
  device.pushErrorScope('validation');
  const module = device.createShaderModule({ code: source });
  const info = await module.getCompilationInfo();
  const deviceError = await device.popErrorScope();
  const diagnostics = info.messages.map((message): WgslDiagnostic => ({
    type: message.type,
    line: message.lineNum,
    column: message.linePos,
    message: message.message.trim(),
  }));
  return { module, diagnostics, deviceError };
}

/** Every message Tint gives for a source (errors, warnings, notes), in its order. */
export async function wgslDiagnostics(
  context: WebGpuContext,
  source: string,
): Promise<WgslDiagnostic[]> {
  const { diagnostics, deviceError } = await createModule(context, source);
  if (deviceError !== null && !diagnostics.some((diagnostic) => diagnostic.type === 'error')) {
    diagnostics.push({ type: 'error', line: 0, column: 0, message: deviceError.message.trim() });
  }
  return diagnostics;
}

/**
 * Compiles WGSL with Tint (through Dawn). The first error, if any, is thrown as a WgslCompileError
 * with its line, column and source line; warnings are returned with the module.
 */
export async function compileWgsl(context: WebGpuContext, source: string): Promise<CompiledWgsl> {
  const { module, diagnostics, deviceError } = await createModule(context, source);
  const error = diagnostics.find((diagnostic) => diagnostic.type === 'error');
  if (error !== undefined) throw new WgslCompileError(error, source, diagnostics);
  if (deviceError !== null) {
    throw new WebGpuError(`WGSL shader module is invalid: ${deviceError.message.trim()}`);
  }
  return { module, warnings: diagnostics.filter((diagnostic) => diagnostic.type !== 'error') };
}
