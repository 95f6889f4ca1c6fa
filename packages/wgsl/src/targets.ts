import {
  ValidationError,
  describeJson,
  checkTargetRecord,
  takeSnapshot,
  type TargetLimits,
} from '@forge/ir';

/**
 * Optional WGSL features: `f16` (the `shader-f16` device feature, needed for any f16 in a spec) and
 * `subgroups` (lets warp operations use subgroup shuffles where the hardware subgroup allows).
 */
export const WGSL_FEATURES = ['f16', 'subgroups'] as const;
/** An optional WGSL feature; see WGSL_FEATURES. */
export type WgslFeature = (typeof WGSL_FEATURES)[number];

/**
 * A WGSL target: the device features the emitted shader may use (in WGSL_FEATURES order, no
 * duplicates, as `wgslTarget` builds it). Part of every cache key.
 */
export interface WgslTarget {
  readonly kind: 'wgsl';
  readonly features: readonly WgslFeature[];
}

/**
 * What every WGSL schedule must respect beyond a knob's `wgsl` bounds: 1024 invocations and 32 KiB
 * of workgroup memory, the limits the runner raises a device to (above WebGPU's defaults).
 */
export const WGSL_LIMITS: TargetLimits = {
  kind: 'wgsl',
  maxWorkgroupSize: 1024,
  maxSharedBytes: 32 * 1024,
};

/** A WGSL target from feature names (order and duplicates ignored); an unknown one is a ValidationError. */
export function wgslTarget(features: readonly string[] = []): WgslTarget {
  const chosen = new Set<WgslFeature>();
  for (const feature of features) {
    const known = WGSL_FEATURES.find((candidate) => candidate === feature);
    if (known === undefined) {
      throw new ValidationError([
        {
          path: 'features',
          message: `unknown WGSL feature '${feature}' (known: ${WGSL_FEATURES.join(', ')})`,
        },
      ]);
    }
    chosen.add(known);
  }
  return { kind: 'wgsl', features: WGSL_FEATURES.filter((feature) => chosen.has(feature)) };
}

/**
 * `value` checked as a WgslTarget and read once (emission prints its features into the source):
 * kind `wgsl` and known features, put in WGSL_FEATURES order without duplicates as wgslTarget does.
 */
export function checkWgslTarget(value: unknown): WgslTarget {
  const copy = checkTargetRecord(value, 'wgsl', ['features']);
  const fail = (path: string, message: string): never => {
    throw new ValidationError([{ path, message }]);
  };
  const features = copy['features'];
  if (!Array.isArray(features) || !features.every((feature) => typeof feature === 'string'))
    return fail(
      'target.features',
      `must be an array of feature names, got ${describeJson(features)}`,
    );
  return takeSnapshot(wgslTarget(features as readonly string[])) as WgslTarget;
}

/** Parses `f16,subgroups` as given on a command line. */
export function parseWgslFeatures(list: string): WgslTarget {
  return wgslTarget(
    list
      .split(',')
      .map((feature) => feature.trim())
      .filter((feature) => feature !== ''),
  );
}

export const hasFeature = (target: WgslTarget, feature: WgslFeature): boolean =>
  target.features.includes(feature);
