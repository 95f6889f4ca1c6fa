import { ValidationError, WGSL_FEATURES, type WgslFeature, type WgslTarget } from '@forge/ir';

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
