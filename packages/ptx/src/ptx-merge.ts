// Merges PTX modules into one so a single ptxas run assembles them all: ptxas's start-up is about
// half of a small kernel's assembly time, and it reports registers and spills for each entry.
import { InternalError } from '@forge/ir';

/** A module cut into what merging needs; only modules of a shape merging is known to keep. */
export interface PtxModuleParts {
  /** `.version`, `.target` and `.address_size`, one a line: modules merge only with the same. */
  readonly header: string;
  /** Each `.file` directive's index and the rest of it (the name, and size or time when given). */
  readonly files: readonly { readonly index: number; readonly rest: string }[];
  /** The module's entries, from the first entry's declaration on; top-level blanks and comments left out. */
  readonly lines: readonly string[];
  /** Each entry's name and the index in `lines` of the line declaring it. */
  readonly entries: readonly { readonly name: string; readonly line: number }[];
}

/** One merged module, and each input's entries under the names the merge gave them. */
export interface MergedPtx {
  readonly source: string;
  /** Per input module, in order: its entries as `{ name, renamed }`, in its order. */
  readonly entries: readonly (readonly { readonly name: string; readonly renamed: string }[])[];
}

const HEADER = /^\.(?:version|target|address_size)\b/;
const FILE = /^\.file\s+(\d+)\s+(\S.*)$/;
const ENTRY = /^(\s*(?:\.(?:visible|weak)\s+)?\.entry\s+)([A-Za-z_%]\w*)(?![\w$])/;
const LOC = /^(\s*\.loc\s+)(\d+)(?!\d)/;

/**
 * A module's parts, or undefined for one merging might change: anything at module scope besides
 * the header, `.file` and `.entry` functions (a `.func`, a module-scope variable, `.extern`: their
 * names would need renaming wherever used), block comments, `$` in an entry name (merged names use
 * it), or a `.loc` naming a file the module does not declare.
 */
export function ptxModuleParts(source: string): PtxModuleParts | undefined {
  const header: string[] = [];
  const files: { index: number; rest: string }[] = [];
  const lines: string[] = [];
  const entries: { name: string; line: number }[] = [];
  let depth = 0;
  let inEntry = false;
  for (const line of source.split('\n')) {
    if (line.includes('/*')) return undefined;
    // Braces in a line comment do not nest.
    const code = line.replace(/\/\/.*$/, '');
    const trimmed = code.trim();
    if (depth === 0 && !inEntry) {
      if (trimmed === '') continue;
      if (HEADER.test(trimmed)) {
        header.push(trimmed.replace(/\s+/g, ' '));
        continue;
      }
      const file = FILE.exec(trimmed);
      if (file !== null) {
        files.push({ index: Number(file[1]), rest: file[2] ?? '' });
        continue;
      }
      const entry = ENTRY.exec(code);
      if (entry === null || code.includes('$')) return undefined;
      entries.push({ name: entry[2] ?? '', line: lines.length });
      inEntry = true;
    }
    const loc = LOC.exec(code);
    if (loc !== null && !files.some((file) => file.index === Number(loc[2]))) return undefined;
    lines.push(line);
    for (const character of code) {
      if (character === '{') depth++;
      if (character === '}') depth--;
    }
    if (depth < 0) return undefined;
    if (depth === 0 && trimmed.endsWith('}')) inEntry = false;
  }
  if (depth !== 0 || inEntry || entries.length === 0 || header.length === 0) return undefined;
  return { header: header.join('\n'), files, lines, entries };
}

/**
 * One module holding every entry of `modules` (which share a header): module i's entries are
 * renamed `NAME$i` and its `.file` indices renumbered after the previous modules', `.loc` lines
 * following. ptxas compiles each entry on its own, so each reports what it would alone.
 */
export function mergePtxModules(modules: readonly PtxModuleParts[]): MergedPtx {
  const header = modules[0]?.header;
  if (header === undefined || modules.some((module) => module.header !== header))
    throw new InternalError('ptx', 'mergePtxModules: the modules need one header');
  const files: string[] = [];
  const lines: string[] = [];
  const entries = modules.map((module, moduleIndex) => {
    const fileIndex = new Map(
      module.files.map((file) => {
        files.push(`.file ${files.length + 1} ${file.rest}`);
        return [file.index, files.length] as const;
      }),
    );
    const renamed = module.entries.map((entry) => ({
      name: entry.name,
      renamed: `${entry.name}$${moduleIndex}`,
    }));
    const declarations = new Map(module.entries.map((entry, index) => [entry.line, index]));
    module.lines.forEach((line, lineIndex) => {
      const entry = declarations.get(lineIndex);
      if (entry !== undefined)
        lines.push(
          line.replace(ENTRY, (_, prefix: string) => `${prefix}${renamed[entry]?.renamed}`),
        );
      else
        lines.push(
          line.replace(LOC, (_, prefix: string, index: string) => {
            return `${prefix}${fileIndex.get(Number(index))}`;
          }),
        );
    });
    lines.push('');
    return renamed;
  });
  return { source: [header, '', ...files, '', ...lines].join('\n'), entries };
}
