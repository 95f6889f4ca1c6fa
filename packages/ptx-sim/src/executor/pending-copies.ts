/** One cp.async not yet waited for: its thread, the shared bytes it writes and its group. */
interface PendingCopy {
  readonly thread: number;
  readonly start: number;
  readonly end: number;
  /** The thread's commit count when it was issued: the group it joins at the next commit. */
  readonly group: number;
}

/**
 * A CTA's cp.async copies in flight, for the sanitizer. The simulator copies at issue, but on a GPU
 * the shared bytes are written some time before the issuing thread's cp.async.wait_group covers
 * the copy's group, so touching them earlier (from any thread) reads or writes a race.
 */
export class PendingCopies {
  private readonly copies: PendingCopy[] = [];
  private readonly committed: Int32Array;

  constructor(threads: number) {
    this.committed = new Int32Array(threads);
  }

  get size(): number {
    return this.copies.length;
  }

  reset(): void {
    this.copies.length = 0;
    this.committed.fill(0);
  }

  /** The thread with a copy in flight to a byte of [start, end), if any. */
  writerOf(start: number, end: number): number | undefined {
    for (const copy of this.copies) if (copy.start < end && start < copy.end) return copy.thread;
    return undefined;
  }

  add(thread: number, start: number, end: number): void {
    this.copies.push({ thread, start, end, group: this.committed[thread] ?? 0 });
  }

  /** cp.async.commit_group: the thread's uncommitted copies become its newest group. */
  commit(thread: number): void {
    this.committed[thread] = (this.committed[thread] ?? 0) + 1;
  }

  /** cp.async.wait_group N: all but the thread's newest `pending` groups have landed. */
  wait(thread: number, pending: number): void {
    const landed = (this.committed[thread] ?? 0) - pending;
    let kept = 0;
    for (const copy of this.copies)
      if (copy.thread !== thread || copy.group >= landed) this.copies[kept++] = copy;
    this.copies.length = kept;
  }
}
