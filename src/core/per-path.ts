/**
 * Functions a capture runs once or more for each of its paths, declared where they are defined (closures each
 * time they are made). Whoever runs the process decides once what is done with them: a one-shot command keeps
 * them out of JavaScriptCore's last tier (cli/one-shot-jit.ts), a server leaves them to it. Declarations made
 * before the decision wait for it; after it, none is kept.
 */
let decided = false;
let policy: ((fn: Function) => void) | null = null;
const pending: Function[] = [];

/** Declares `fn` as run per path; returns it. */
export function perPath<F extends Function>(fn: F): F {
  if (!decided) pending.push(fn);
  else policy?.(fn);
  return fn;
}

/**
 * Decides what per-path functions get (null: nothing), those declared so far and those to come. The first
 * decision of a process stands: a later one is ignored (false).
 */
export function setPerPathPolicy(apply: ((fn: Function) => void) | null): boolean {
  if (decided) return false;
  decided = true;
  policy = apply;
  for (const fn of pending.splice(0)) apply?.(fn);
  return true;
}
