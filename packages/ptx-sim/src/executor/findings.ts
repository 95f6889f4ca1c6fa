import type { SourceLocation } from '../ast.js';

export const FINDING_CATEGORIES = [
  'divergent-barrier',
  'shared-race',
  'out-of-bounds',
  'misaligned',
  'uninitialized-register',
  'shuffle-mask',
  'deadlock',
] as const;
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
}

const MAX_FINDINGS = 200;

/** Collects findings, one per (category, line), counting repeats. */
export class FindingLog {
  private readonly byKey = new Map<string, Finding & { occurrences: number }>();

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
    this.byKey.set(key, {
      category,
      message,
      line: location.line,
      instruction: location.text,
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
  return `${finding.category} at line ${finding.line}: ${finding.message} [${finding.instruction}] (cta ${finding.cta.join(',')} thread ${finding.thread.join(',')})${repeats}`;
}
