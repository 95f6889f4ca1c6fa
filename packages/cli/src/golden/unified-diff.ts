/** A unified diff of two texts by lines (LCS-based), with `context` lines around each change. */
export function unifiedDiff(
  oldText: string,
  newText: string,
  oldName: string,
  newName: string,
  context = 3,
): string {
  const a = oldText.split('\n');
  const b = newText.split('\n');
  // Trim the common prefix and suffix so the quadratic table covers only the changed middle.
  let prefix = 0;
  while (prefix < a.length && prefix < b.length && a[prefix] === b[prefix]) prefix++;
  let suffix = 0;
  while (
    suffix < a.length - prefix &&
    suffix < b.length - prefix &&
    a[a.length - 1 - suffix] === b[b.length - 1 - suffix]
  )
    suffix++;
  const middleA = a.slice(prefix, a.length - suffix);
  const middleB = b.slice(prefix, b.length - suffix);
  const rows = middleA.length + 1;
  const columns = middleB.length + 1;
  const table = new Uint32Array(rows * columns);
  for (let i = middleA.length - 1; i >= 0; i--) {
    for (let j = middleB.length - 1; j >= 0; j--) {
      table[i * columns + j] =
        middleA[i] === middleB[j]
          ? (table[(i + 1) * columns + j + 1] ?? 0) + 1
          : Math.max(table[(i + 1) * columns + j] ?? 0, table[i * columns + j + 1] ?? 0);
    }
  }
  type Line = { kind: ' ' | '-' | '+'; text: string; oldLine: number; newLine: number };
  const lines: Line[] = [];
  for (let k = 0; k < prefix; k++)
    lines.push({ kind: ' ', text: a[k] ?? '', oldLine: k, newLine: k });
  let i = 0;
  let j = 0;
  while (i < middleA.length || j < middleB.length) {
    if (i < middleA.length && j < middleB.length && middleA[i] === middleB[j]) {
      lines.push({
        kind: ' ',
        text: middleA[i] ?? '',
        oldLine: prefix + i++,
        newLine: prefix + j++,
      });
    } else if (
      i < middleA.length &&
      (j === middleB.length ||
        (table[(i + 1) * columns + j] ?? 0) >= (table[i * columns + j + 1] ?? 0))
    ) {
      lines.push({ kind: '-', text: middleA[i] ?? '', oldLine: prefix + i++, newLine: prefix + j });
    } else {
      lines.push({ kind: '+', text: middleB[j] ?? '', oldLine: prefix + i, newLine: prefix + j++ });
    }
  }
  for (let k = 0; k < suffix; k++) {
    lines.push({
      kind: ' ',
      text: a[a.length - suffix + k] ?? '',
      oldLine: a.length - suffix + k,
      newLine: b.length - suffix + k,
    });
  }
  const output = [`--- ${oldName}`, `+++ ${newName}`];
  let index = 0;
  while (index < lines.length) {
    if (lines[index]?.kind === ' ') {
      index++;
      continue;
    }
    const start = Math.max(0, index - context);
    let end = index;
    // Extend the hunk while changes are within 2*context lines of each other.
    for (let scan = index; scan < lines.length; scan++) {
      if (lines[scan]?.kind !== ' ') end = scan;
      else if (scan - end > 2 * context) break;
    }
    const stop = Math.min(lines.length, end + context + 1);
    const hunk = lines.slice(start, stop);
    const first = hunk[0] as Line;
    const oldCount = hunk.filter((line) => line.kind !== '+').length;
    const newCount = hunk.filter((line) => line.kind !== '-').length;
    output.push(`@@ -${first.oldLine + 1},${oldCount} +${first.newLine + 1},${newCount} @@`);
    for (const line of hunk) output.push(`${line.kind}${line.text}`);
    index = stop;
  }
  return output.join('\n');
}
