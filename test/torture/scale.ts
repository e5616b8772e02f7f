/**
 * How hard the torture suite pushes. `npm test` runs a fast subset of every
 * torture scenario; `npm run torture` sets WORKSNAP_TORTURE=full and runs the
 * full counts, whose figures (attempts, failures) are recorded in docs/torture.md.
 */
export const FULL = process.env.WORKSNAP_TORTURE === "full";

/** `fast` attempts in the regular suite, `full` in `npm run torture`. */
export function attempts(fast: number, full: number): number {
  return FULL ? full : fast;
}

/** A per-test timeout that grows with the scale. */
export function budgetMs(fast: number, full: number): number {
  return FULL ? full : fast;
}
