// Edited copies of the tiny models (edits from @forge/test-fixtures' gguf-edits), written to a
// temporary directory, for the error and tied-output tests.
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  tinyLlamaGguf,
  writeGguf,
  type GgufFile,
  type TinyLlamaVariant,
} from '@forge/test-fixtures';

/** The committed fixtures, relative to this package. */
export const fixturePath = (variant: TinyLlamaVariant): string =>
  new URL(`../../../fixtures/tiny-llama/tiny-llama-${variant}.gguf`, import.meta.url).pathname;

const directory = mkdtempSync(join(tmpdir(), 'forge-llama-'));
let written = 0;

/** Writes `bytes` to a fresh file in the test directory and returns its path. */
export function writeModelBytes(bytes: Uint8Array): string {
  written += 1;
  const path = join(directory, `model-${written}.gguf`);
  writeFileSync(path, bytes);
  return path;
}

/** Writes the variant after `edit`. */
export function writeEditedModel(
  variant: TinyLlamaVariant,
  edit: (file: GgufFile) => GgufFile,
): string {
  return writeModelBytes(writeGguf(edit(tinyLlamaFile(variant))));
}

const files = new Map<TinyLlamaVariant, GgufFile>();

/** The variant's parts, made once per test file (quantizing the q variant takes seconds). */
export function tinyLlamaFile(variant: TinyLlamaVariant): GgufFile {
  const file = files.get(variant) ?? tinyLlamaGguf(variant);
  files.set(variant, file);
  return file;
}
