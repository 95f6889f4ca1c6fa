// Node's side of model reading: a GGUF file on disk, opened as a Blob so only the parts read are loaded.
import { openAsBlob } from 'node:fs';
import { stat } from 'node:fs/promises';
import { readGgufHeader, type GgufHeader } from './gguf/gguf-header.js';
import { ModelError, parseLlamaModel, type LlamaModel } from './model.js';

/** The file as a Blob; stat first, since openAsBlob's own error carries no errno code. */
async function openFileBlob(path: string): Promise<Blob> {
  const info = await stat(path);
  if (!info.isFile())
    throw Object.assign(new Error(`${path} is not a file`), { code: 'EISDIR', syscall: 'open' });
  return openAsBlob(path);
}

/** The file at `path` as a Blob, or a ModelError naming its errno code. */
async function openModelFile(path: string): Promise<Blob> {
  try {
    return await openFileBlob(path);
  } catch (error) {
    const code = (error as NodeJS.ErrnoException).code ?? 'unreadable';
    throw new ModelError(path, '', `not a readable GGUF file (${code})`);
  }
}

/**
 * Reads the Llama model in the GGUF file at `path` (Node only; see parseLlamaModel for bytes or a
 * browser File). A file that cannot be opened is a ModelError naming its errno code.
 */
export async function readLlamaModel(path: string): Promise<LlamaModel> {
  return parseLlamaModel(await openModelFile(path), path);
}

/** The checked header of the GGUF file at `path` (any architecture); a ModelError when malformed. */
export async function readGgufFileHeader(path: string): Promise<GgufHeader> {
  return readGgufHeader(await openModelFile(path), path);
}

/**
 * `length` bytes of `file` from byte `start`, fewer when the file ends first. File errors are thrown
 * as Node raises them (ENOENT, EACCES; EISDIR for a directory).
 */
export async function readFileBytes(
  file: string,
  start: number,
  length: number,
): Promise<Uint8Array> {
  const blob = await openFileBlob(file);
  return new Uint8Array(await blob.slice(start, start + length).arrayBuffer());
}
