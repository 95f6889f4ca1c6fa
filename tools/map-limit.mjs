// Runs `task` over `items` with at most `limit` running at once: the benches and the schedule sweep
// keep two ptxas (or nvdisasm) processes busy on a 2-core machine.

/** `task(item)` for every item, `limit` at a time; the results in the items' order. */
export async function mapLimit(items, limit, task) {
  const results = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await task(items[index]);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}
