import { invalidArgument } from "../../core/errors";
import { ROOT, type RepoPath } from "../../core/repo-path";
import { globFilter } from "./glob";
import { inScope, parseScopeArg } from "./tree-side";

/**
 * A `paths` argument of a comparison or a search. Each entry is a repo path (a
 * file, or a directory and everything under it) or, holding `*` or `?`, a
 * glob as `include` takes them (`*.ts` at any depth, `src/*.ts` and
 * `src/**\/*.ts` from the root), as a caller used to `git diff -- '*.ts'`
 * writes one. A glob entry also matches as the literal path it spells; `[`
 * alone makes no glob (`app/[slug]/page.tsx` is a path). Before, a glob was
 * taken as a path that names nothing, and the answer was an empty one.
 */
export interface PathsArg {
  /** What the sides are read under: the literal paths, or the whole tree when a glob is among them. */
  scope: RepoPath[];
  /** Which entries of those sides count; null when every one does. */
  filter: ((path: string) => boolean) | null;
  /** The argument as a cursor's identity names it. */
  key: string[];
}

/** An entry that is a glob: it holds `*` or `?` (`[` alone does not make one). */
const isGlob = (entry: unknown): entry is string => typeof entry === "string" && /[*?]/.test(entry);

export function parsePathsArg(paths: string[] | undefined, argName = "paths"): PathsArg {
  if (paths === undefined || !Array.isArray(paths) || !paths.some(isGlob)) {
    const scope = parseScopeArg(paths, argName);
    return { scope, filter: null, key: scope };
  }
  const literal: string[] = [];
  const globs: string[] = [];
  for (const raw of paths) {
    if (!isGlob(raw)) {
      literal.push(raw);
      continue;
    }
    const glob = raw.startsWith("./") ? raw.slice(2) : raw;
    if (glob.startsWith("/") || glob.split("/").includes("..")) {
      throw invalidArgument(`${argName} glob ${JSON.stringify(raw)} reaches outside the root; globs are relative to it`, { arg: argName });
    }
    globs.push(glob);
  }
  const scope = literal.length > 0 ? parseScopeArg(literal, argName) : [];
  const matches = globFilter(globs, undefined, argName);
  const filter = (path: string) => (scope.length > 0 && inScope(path, scope)) || globs.includes(path) || matches(path);
  return { scope: [ROOT], filter, key: [...scope, ...globs] };
}

/** Both sides of a comparison, and what could not be read, narrowed to what `filter` keeps (as they are without one). */
export function narrowedSides<T extends { from: Side; to: Side; unreadable: string[] }>(sides: T, filter: PathsArg["filter"]): T {
  if (filter === null) return sides;
  const narrow = <S extends Side>(side: S): S => ({ ...side, entries: side.entries.filter((e) => filter(e.path)) });
  return { ...sides, from: narrow(sides.from), to: narrow(sides.to), unreadable: sides.unreadable.filter(filter) };
}

type Side = { entries: { path: string }[] };
