// A later dispatch's body built with a builder typed by the kernel's declarations. defineKernel
// types only the first dispatch's builder (a StageDeclaration's callback gets an untyped one), but
// it takes a built stage body as it is, so a stage built here reads its memory and params by name.
import type { Stmt } from '../body.js';
import { BodyBuilder, type DeclaredBy, type KernelDeclarations } from '../builder.js';
import { scratchAsBuffer } from '../dispatch.js';

/**
 * The body of stage `index`, built by `build` as defineKernel builds a stage's: `declarations`
 * with the stage's shared arrays, scratch buffers as buffers. The spec validates it with the rest.
 */
export function stageBody<const D extends KernelDeclarations>(
  declarations: D,
  index: number,
  build: (body: BodyBuilder<DeclaredBy<D>>) => void,
): readonly Stmt[] {
  const { scratch = [], ...own } = declarations;
  const body = new BodyBuilder<DeclaredBy<D>>(
    { ...own, buffers: [...own.buffers, ...scratch.map(scratchAsBuffer)] },
    `stages[${index}].body`,
  );
  try {
    build(body);
  } finally {
    body.finish();
  }
  return body.statements;
}
