import { ForgeError } from '@forge/ir';

/** What to run to get a WebGPU adapter on a CPU-only Debian machine. */
export const WEBGPU_SETUP_HINT =
  "run `bash tools/setup-webgpu.sh` as root: it installs Mesa's lavapipe CPU Vulkan driver " +
  "(mesa-vulkan-drivers from bookworm-backports; bookworm's own Mesa 22 is rejected by Dawn) " +
  'and the Vulkan loader libvulkan1';

/** What to install when the optional peer dependency `webgpu` is missing. */
export const WEBGPU_PACKAGE_HINT =
  'install the optional peer dependency beside @forge/wgsl: `npm install webgpu@0.6.2` (Dawn for Node.js)';

/** Dawn found no adapter (no usable Vulkan driver), or could not be loaded at all. */
export class WebGpuUnavailableError extends ForgeError {
  override readonly name = 'WebGpuUnavailableError';
  constructor(reason: string, options?: { cause?: unknown; hint?: string }) {
    super(`no WebGPU adapter: ${reason}; ${options?.hint ?? WEBGPU_SETUP_HINT}`);
    if (options?.cause !== undefined) this.cause = options.cause;
  }
}

/** A feature the kernel needs (`shader-f16`, `subgroups`) is missing from the adapter or the device. */
export class WebGpuFeatureError extends ForgeError {
  override readonly name = 'WebGpuFeatureError';
  constructor(
    readonly feature: string,
    detail: string,
  ) {
    super(`WebGPU feature '${feature}' ${detail}`);
  }
}

/** A launch exceeds one of the device's limits (grid dimension, workgroup size, workgroup memory). */
export class WebGpuLimitError extends ForgeError {
  override readonly name = 'WebGpuLimitError';
  constructor(
    readonly limit: string,
    readonly value: number,
    readonly maximum: number,
    what: string,
  ) {
    super(`${what} is ${value}, over the device's ${limit} of ${maximum}`);
  }
}

/** WebGPU reported a validation or out-of-memory error while creating or running a pipeline. */
export class WebGpuError extends ForgeError {
  override readonly name = 'WebGpuError';
}

/** One message of Tint's verdict on a WGSL source; line and column are 1-based (0 when unknown). */
export interface WgslDiagnostic {
  readonly type: 'error' | 'warning' | 'info';
  readonly line: number;
  readonly column: number;
  readonly message: string;
}

/** `line:col: type: message`, or `type: message` when the message has no location. */
export function formatWgslDiagnostic(diagnostic: WgslDiagnostic): string {
  const where = diagnostic.line > 0 ? `${diagnostic.line}:${diagnostic.column}: ` : '';
  return `${where}${diagnostic.type}: ${diagnostic.message}`;
}

/**
 * Tint rejected a WGSL source. The message's first line is `line:col: error: message`; the next
 * lines show the offending source line and a caret under the column.
 */
export class WgslCompileError extends ForgeError {
  override readonly name = 'WgslCompileError';
  readonly line: number;
  readonly column: number;
  /** Tint's message for the first error, without location. */
  readonly diagnostic: string;
  /** The source line the first error points at ('' when it has no location). */
  readonly sourceLine: string;
  /** Every message Tint gave, errors, warnings and notes. */
  readonly diagnostics: readonly WgslDiagnostic[];
  constructor(error: WgslDiagnostic, source: string, diagnostics: readonly WgslDiagnostic[]) {
    const sourceLine = error.line > 0 ? (source.split(/\r?\n/)[error.line - 1] ?? '') : '';
    const excerpt =
      sourceLine === '' ? '' : `\n  ${sourceLine}\n  ${' '.repeat(Math.max(0, error.column - 1))}^`;
    super(`${formatWgslDiagnostic(error)}${excerpt}`);
    this.line = error.line;
    this.column = error.column;
    this.diagnostic = error.message;
    this.sourceLine = sourceLine;
    this.diagnostics = diagnostics;
  }
}
