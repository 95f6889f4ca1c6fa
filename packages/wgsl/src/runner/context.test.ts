import { ForgeError } from '@forge/ir';
import { afterAll, describe, expect, it } from 'vitest';
import { normalizeFeatures, openWebGpu } from './context.js';
import { WebGpuFeatureError, WebGpuUnavailableError } from './errors.js';
import { closeSharedWebGpu, sharedWebGpu } from './shared.js';

afterAll(closeSharedWebGpu);

describe('openWebGpu', () => {
  it('says what to install when there is no adapter', async () => {
    const gpu = { requestAdapter: () => Promise.resolve(null) };
    const error = await openWebGpu({ gpu }).catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(WebGpuUnavailableError);
    expect(error).toBeInstanceOf(ForgeError);
    const message = error instanceof Error ? error.message : '';
    expect(message).toMatch(/^no WebGPU adapter: /);
    for (const part of [
      'bash tools/setup-webgpu.sh',
      'mesa-vulkan-drivers',
      'bookworm-backports',
      'libvulkan1',
      'lavapipe',
    ])
      expect(message).toContain(part);
  });

  it('turns a failing requestAdapter into the same error', async () => {
    const gpu = { requestAdapter: () => Promise.reject(new Error('vkCreateInstance failed')) };
    await expect(openWebGpu({ gpu })).rejects.toThrow(
      /requestAdapter failed: vkCreateInstance failed; run `bash tools\/setup-webgpu.sh`/,
    );
  });

  it('names a requested feature the adapter lacks', async () => {
    const error = await openWebGpu({ features: ['texture-compression-astc'] }).catch(
      (caught: unknown) => caught,
    );
    expect(error).toBeInstanceOf(WebGpuFeatureError);
    expect(error).toMatchObject({ feature: 'texture-compression-astc' });
    expect(error instanceof Error ? error.message : '').toMatch(
      /^WebGPU feature 'texture-compression-astc' is not offered by the adapter/,
    );
  });

  it("raises the device's limits to the adapter's and enables the requested features", async () => {
    const context = await sharedWebGpu(['f16', 'subgroups']);
    const { adapter, device } = context;
    expect(context.features).toEqual(['shader-f16', 'subgroups']);
    expect(device.features.has('shader-f16')).toBe(true);
    expect(device.features.has('subgroups')).toBe(true);
    for (const limit of [
      'maxComputeInvocationsPerWorkgroup',
      'maxComputeWorkgroupSizeX',
      'maxComputeWorkgroupStorageSize',
      'maxStorageBuffersPerShaderStage',
    ] as const)
      expect(device.limits[limit]).toBe(adapter.limits[limit]);
    // What lavapipe offers, and what the kernels rely on.
    expect(device.limits.maxComputeInvocationsPerWorkgroup).toBeGreaterThanOrEqual(1024);
    expect(device.limits.maxComputeWorkgroupStorageSize).toBeGreaterThanOrEqual(32768);
  });
});

describe('sharedWebGpu', () => {
  it('normalizes feature lists', () => {
    expect(normalizeFeatures(['subgroups', 'f16', 'shader-f16'])).toEqual([
      'shader-f16',
      'subgroups',
    ]);
  });

  it('reuses one context per feature set, and closeSharedWebGpu destroys them', async () => {
    const plain = await sharedWebGpu();
    expect(await sharedWebGpu([])).toBe(plain);
    const both = await sharedWebGpu(['subgroups', 'shader-f16']);
    expect(await sharedWebGpu(['f16', 'subgroups'])).toBe(both);
    expect(both).not.toBe(plain);
    expect(plain.features).toEqual([]);

    await closeSharedWebGpu();
    const [plainLost, bothLost] = await Promise.all([plain.device.lost, both.device.lost]);
    expect(plainLost.reason).toBe('destroyed');
    expect(bothLost.reason).toBe('destroyed');

    const fresh = await sharedWebGpu();
    expect(fresh).not.toBe(plain);
    expect(fresh.device.features.size).toBe(plain.device.features.size);
  });

  it('does not cache a failed open', async () => {
    await expect(sharedWebGpu(['texture-compression-astc'])).rejects.toThrow(WebGpuFeatureError);
    await expect(sharedWebGpu(['texture-compression-astc'])).rejects.toThrow(WebGpuFeatureError);
  });
});
