// The floor under a cold `snapshot create`: tracked regular files read and hashed with SHA-256 on the native
// module's threads (every core), and nothing else (no git status, no store, no manifest). bench/snapshot.ts times
// it beside the anchors, so the targets can be weighed against what reading and hashing alone cost on the machine.
//
//   node_modules/.bin/bun bench/hash-floor.ts DIR [--distinct]
//
// By default every tracked file is read. With --distinct, each distinct blob of the index is read once (the first
// path that holds it): the floor of a capture that reads no blob twice, on a repository where many paths share
// blobs (bench/gen-repo.ts --layout releases).
import { joinPaths, nativeModule, waitReady } from "../src/repo/native";

if (import.meta.main) {
  const dir = process.argv[2];
  if (!dir) throw new Error("usage: bench/hash-floor.ts DIR [--distinct]");
  const m = nativeModule();
  if (!m) throw new Error("the native module is not built (npm run build)");
  const paths = indexFiles(dir, process.argv.includes("--distinct"));
  // trust every file (a cutoff in the future): SHA-256 only, as sha256sum does
  const job = m.hashStart(dir, joinPaths(paths), paths.length, Date.now() + 3_600_000, 8 * 1024 * 1024, 20);
  await waitReady(m, job, paths.length);
  m.release(job);
}

/** The index's regular files in index order; with `distinct`, only the first path of each blob. */
export function indexFiles(root: string, onePerBlob: boolean): string[] {
  const listing = Bun.spawnSync(["git", "ls-files", "-s", "-z"], { cwd: root }).stdout.toString();
  const seen = new Set<string>();
  const out: string[] = [];
  for (const rec of listing.split("\0")) {
    const tab = rec.indexOf("\t");
    if (tab <= 0 || !(rec.startsWith("100644 ") || rec.startsWith("100755 "))) continue;
    const oid = rec.slice(7, rec.indexOf(" ", 7));
    if (onePerBlob) {
      if (seen.has(oid)) continue;
      seen.add(oid);
    }
    out.push(rec.slice(tab + 1));
  }
  return out;
}
