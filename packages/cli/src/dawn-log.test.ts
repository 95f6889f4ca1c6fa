import { describe, expect, it } from 'vitest';
import { dawnLogFilter, lineSplitter, opensDawn } from './dawn-log.js';

describe('the Dawn log filter', () => {
  it('drops Dawn records, multi-line ones included, and keeps every other line', () => {
    const stderr = [
      'Warning: maxDynamicUniformBuffersPerPipelineLayout artificially reduced from 1000000 to 16 to fit dynamic offset allocation limit.\n',
      'Warning: vkCreateInstance failed with VK_ERROR_INCOMPATIBLE_DRIVER\n',
      '    at CheckVkSuccessImpl (dawn/native/vulkan/VulkanError.cpp:106)\n',
      '\n',
      'forge run: no WebGPU adapter: Dawn found no usable Vulkan driver\n',
      'Error: a crash keeps its trace\n',
      '    at main (bin.js:1)\n',
    ];
    const kept: string[] = [];
    const keep = dawnLogFilter();
    const lines = lineSplitter((line) => {
      if (keep(line)) kept.push(line);
    });
    // Chunks split mid-line, as a pipe delivers them.
    const text = stderr.join('');
    for (let at = 0; at < text.length; at += 7) lines.push(text.slice(at, at + 7));
    lines.end();
    expect(kept).toEqual(stderr.slice(4));
  });

  it('applies to run, decode and validate with --target wgsl, and to validate of .wgsl files alone', () => {
    expect(opensDawn(['run', 'rmsnorm', '--target', 'wgsl'])).toBe(true);
    expect(opensDawn(['decode', 'm.gguf', '--tokens', '1', '--target', 'wgsl'])).toBe(true);
    expect(opensDawn(['decode', 'm.gguf', '--tokens', '1', '--target', 'interp'])).toBe(false);
    expect(opensDawn(['validate', '--target=wgsl', 'a.wgsl'])).toBe(true);
    expect(opensDawn(['validate', 'a.wgsl', 'b.wgsl'])).toBe(true);
    expect(opensDawn(['validate', '--target', 'ptx', 'a.wgsl'])).toBe(false);
    expect(opensDawn(['validate', 'a.wgsl', 'b.ptx'])).toBe(false);
    expect(opensDawn(['validate'])).toBe(false);
    expect(opensDawn(['validate', 'a.ptx'])).toBe(false);
    expect(opensDawn(['run', 'rmsnorm', '--target', 'ptx-sim'])).toBe(false);
    expect(opensDawn(['emit', 'rmsnorm', '--target', 'wgsl'])).toBe(false);
  });
});
