/**
 * What HEAD names, told without running git: the identity (indexIdentity: device, inode, size, times) of
 * every file git reads to resolve it. git updates a ref by renaming a new file over it (or rewriting
 * `packed-refs` the same way), so any move of HEAD or of the branch it names changes one of them.
 *
 * Resolved as git does for refs kept as files: `HEAD` in the work tree's git directory; a symbolic HEAD names a
 * ref, looked up as a loose file (in the git directory, and in the common directory of linked work trees) and
 * in `packed-refs`. Null where this cannot vouch: refs kept in a reftable, a HEAD that cannot be read, or a
 * loose ref that is itself symbolic.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { commonDir } from "./common-dir";
import { indexIdentity } from "./index-identity";

export function headIdentity(gitDir: string): string | null {
  let head: string;
  try {
    head = readFileSync(join(gitDir, "HEAD"), "latin1");
  } catch {
    return null;
  }
  const common = commonDir(gitDir);
  if (common === null || existsSync(join(common, "reftable"))) return null;
  const parts = [head, indexIdentity(join(gitDir, "HEAD")) ?? "-"];
  const m = /^ref: (refs\/[^\n]+)\n?$/.exec(head);
  if (m === null) return /^[0-9a-f]{40,64}\n?$/.test(head) ? parts.join("|") : null;
  const ref = m[1] as string;
  if (ref.split("/").some((part) => part === ".." || part === "")) return null;
  for (const dir of common === gitDir ? [gitDir] : [gitDir, common]) {
    const loose = join(dir, ref);
    try {
      if (readFileSync(loose, "latin1").startsWith("ref:")) return null;
    } catch {
      // not a loose ref here (its absence is part of the identity)
    }
    parts.push(indexIdentity(loose) ?? "-");
  }
  parts.push(indexIdentity(join(common, "packed-refs")) ?? "-");
  return parts.join("|");
}
