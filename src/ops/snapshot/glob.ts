import { invalidArgument } from "../../core/errors";

/**
 * include/exclude as Bun globs. Like ripgrep's -g, a glob without "/" matches
 * the file name at any depth ("*.ts"); one with "/" matches the whole
 * repo-relative path ("src/**\/*.ts"). Exclude wins over include.
 */
export function globFilter(include: string[] | undefined, exclude: string[] | undefined, includeArg = "include"): (path: string) => boolean {
  const compile = (globs: string[] | undefined, arg: string) => {
    if (globs === undefined) return null;
    if (!Array.isArray(globs)) throw invalidArgument(`${arg} must be an array of globs`, { arg });
    return globs.map((g) => {
      if (typeof g !== "string" || g === "") throw invalidArgument(`${arg} globs must be non-empty strings`, { arg });
      const glob = new Bun.Glob(g.startsWith("./") ? g.slice(2) : g);
      const whole = g.includes("/");
      return (path: string) => glob.match(whole ? path : path.slice(path.lastIndexOf("/") + 1));
    });
  };
  const inc = compile(include, includeArg);
  const exc = compile(exclude, "exclude");
  // asked once per candidate (100k in a whole-tree grep): no array or closure made per call
  if (inc === null && exc === null) return () => true;
  return (path) => (inc === null || anyMatches(inc, path)) && (exc === null || !anyMatches(exc, path));
}

function anyMatches(matchers: ((path: string) => boolean)[], path: string): boolean {
  for (const m of matchers) if (m(path)) return true;
  return false;
}
