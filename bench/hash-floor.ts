// The floor under a cold `snapshot create`: every tracked regular file read and hashed with SHA-256 on the native
// module's threads, and nothing else (no git status, no store, no manifest). bench/snapshot.ts times it beside
// the anchors, so the targets can be weighed against what reading and hashing alone cost on the machine.
//
//   node_modules/.bin/bun bench/hash-floor.ts DIR
import { joinPaths, nativeModule, waitReady } from "../src/repo/native";

const dir = process.argv[2];
if (!dir) throw new Error("usage: bench/hash-floor.ts DIR");
const m = nativeModule();
if (!m) throw new Error("the native module is not built (npm run build)");
const listing = Bun.spawnSync(["git", "ls-files", "-s", "-z"], { cwd: dir }).stdout.toString();
const paths: string[] = [];
for (const rec of listing.split("\0")) {
  const tab = rec.indexOf("\t");
  if (tab > 0 && (rec.startsWith("100644 ") || rec.startsWith("100755 "))) paths.push(rec.slice(tab + 1));
}
// trust every file (a cutoff in the future): SHA-256 only, as sha256sum does
const job = m.hashStart(dir, joinPaths(paths), paths.length, Date.now() + 3_600_000, 8 * 1024 * 1024);
await waitReady(m, job, paths.length);
m.release(job);
