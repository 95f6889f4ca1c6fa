import type { SourceLocation, SourcePosition } from '../ast.js';

/**
 * The kinds of bug the sanitizer reports: a barrier not every thread reaches, shared-memory
 * accesses with no barrier between them, out-of-bounds and misaligned accesses, uses of
 * undefined register values (never written, or computed from one: moving, selecting or computing
 * with them is fine; reaching an address, a guard, a stored value or another non-ALU operand is
 * not), shuffle member masks that do not match the lanes present, and shared bytes touched while a
 * cp.async may still be writing them; `trap` is a kernel that executed trap (a GPU aborts the
 * launch). `deadlock` is declared, but nothing reports it yet.
 */
export const FINDING_CATEGORIES = [
  'divergent-barrier',
  'shared-race',
  'out-of-bounds',
  'misaligned',
  'uninitialized-register',
  'shuffle-mask',
  'async-copy-race',
  'trap',
  'deadlock',
] as const;
/** A kind of sanitizer finding; see FINDING_CATEGORIES. */
export type FindingCategory = (typeof FINDING_CATEGORIES)[number];

/** One sanitizer finding: what, where in the PTX, and which CTA and thread saw it first. */
export interface Finding {
  readonly category: FindingCategory;
  readonly message: string;
  readonly line: number;
  readonly instruction: string;
  readonly cta: readonly [number, number, number];
  readonly thread: readonly [number, number, number];
  /** How many times this category fired at this line (findings are reported once per line). */
  readonly occurrences: number;
  /** The compiled source's position, `file.cu:12:5`, when the PTX carries `.loc` (nvcc -lineinfo). */
  readonly source?: string;
}

const describePosition = (position: SourcePosition, files: ReadonlyMap<number, string>): string => {
  const file = files.get(position.file) ?? `file ${position.file}`;
  return `${file.slice(file.lastIndexOf('/') + 1)}:${position.line}:${position.column}`;
};

const MAX_FINDINGS = 200;

/** Longest instruction text or message a finding keeps: a line may be megabytes long. */
const MAX_FINDING_TEXT = 400;
const clip = (text: string): string =>
  text.length > MAX_FINDING_TEXT
    ? `${text.slice(0, MAX_FINDING_TEXT)}… (${text.length - MAX_FINDING_TEXT} more characters)`
    : text;

/** Collects findings, one per (category, line), counting repeats. */
export class FindingLog {
  private readonly byKey = new Map<string, Finding & { occurrences: number }>();

  constructor(private readonly files: ReadonlyMap<number, string> = new Map()) {}

  add(
    category: FindingCategory,
    message: string,
    location: SourceLocation,
    cta: readonly [number, number, number],
    thread: readonly [number, number, number],
  ): void {
    const key = `${category}@${location.line}`;
    const existing = this.byKey.get(key);
    if (existing !== undefined) {
      existing.occurrences++;
      return;
    }
    if (this.byKey.size >= MAX_FINDINGS) return;
    const { source } = location;
    const inlined =
      source?.inlinedAt === undefined
        ? ''
        : ` inlined at ${describePosition(source.inlinedAt, this.files)}`;
    this.byKey.set(key, {
      ...(source === undefined
        ? {}
        : { source: describePosition(source.at, this.files) + inlined }),
      category,
      message: clip(message),
      line: location.line,
      instruction: clip(location.text),
      cta,
      thread,
      occurrences: 1,
    });
  }

  list(): Finding[] {
    return [...this.byKey.values()].sort(
      (a, b) => a.line - b.line || a.category.localeCompare(b.category),
    );
  }
}

/** `category line N: message [instruction] (cta x,y,z thread x,y,z)` — one finding per line of output. */
export function formatFinding(finding: Finding): string {
  const repeats = finding.occurrences > 1 ? ` (${finding.occurrences} times)` : '';
  const source = finding.source === undefined ? '' : ` (${finding.source})`;
  return `${finding.category} at line ${finding.line}${source}: ${finding.message} [${finding.instruction}] (cta ${finding.cta.join(',')} thread ${finding.thread.join(',')})${repeats}`;
}
