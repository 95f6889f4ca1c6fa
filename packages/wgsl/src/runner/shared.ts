import { normalizeFeatures, openWebGpu, type WebGpuContext } from './context.js';

/** One context per feature set per process (vitest runs each test file in its own worker). */
const contexts = new Map<string, Promise<WebGpuContext>>();

/**
 * The process's shared context for a feature set, opened on first use. A failed open is not
 * cached, so the next call tries again. Call closeSharedWebGpu when done (tests: in afterAll).
 */
export function sharedWebGpu(features: readonly string[] = []): Promise<WebGpuContext> {
  const key = normalizeFeatures(features).join(',');
  const cached = contexts.get(key);
  if (cached !== undefined) return cached;
  const opened = openWebGpu({ features });
  contexts.set(key, opened);
  opened.catch(() => {
    if (contexts.get(key) === opened) contexts.delete(key);
  });
  return opened;
}

/** Destroys every shared context; later sharedWebGpu calls open fresh ones. */
export async function closeSharedWebGpu(): Promise<void> {
  const pending = [...contexts.values()];
  contexts.clear();
  const settled = await Promise.allSettled(pending);
  for (const result of settled) {
    if (result.status === 'fulfilled') result.value.destroy();
  }
}
