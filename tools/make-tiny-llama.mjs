// Writes the tiny random Llama models to fixtures/tiny-llama/ (run `pnpm build` first):
//   node tools/make-tiny-llama.mjs
// The bytes depend only on the generator's code, so a rerun rewrites identical files.
import { mkdirSync, writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { TINY_LLAMA_VARIANTS, makeTinyLlama, tinyLlamaFileName } from '@forge/test-fixtures';

const dir = fileURLToPath(new URL('../fixtures/tiny-llama/', import.meta.url));
mkdirSync(dir, { recursive: true });
for (const variant of TINY_LLAMA_VARIANTS) {
  const bytes = makeTinyLlama(variant);
  writeFileSync(dir + tinyLlamaFileName(variant), bytes);
  console.log(`${tinyLlamaFileName(variant)}: ${bytes.length} bytes`);
}
