/** Named dataset sizes; every other entity is sized in proportion to the applications. */
export interface ScaleSpec {
  readonly applications: number;
  readonly programs: number;
  readonly reviewers: number;
  readonly admins: number;
  readonly organizations: number;
  readonly funds: number;
  readonly reports: number;
}

export const scales = {
  tiny: { applications: 50, programs: 3, reviewers: 8, admins: 3, organizations: 6, funds: 2, reports: 4 },
  small: { applications: 1_000, programs: 8, reviewers: 40, admins: 4, organizations: 100, funds: 4, reports: 10 },
  medium: {
    applications: 10_000,
    programs: 20,
    reviewers: 200,
    admins: 6,
    organizations: 1_000,
    funds: 8,
    reports: 20,
  },
  large: {
    applications: 100_000,
    programs: 40,
    reviewers: 1_000,
    admins: 8,
    organizations: 10_000,
    funds: 12,
    reports: 40,
  },
} as const satisfies Record<string, ScaleSpec>;

export type ScaleName = keyof typeof scales;

export function isScaleName(value: string): value is ScaleName {
  return Object.hasOwn(scales, value);
}
