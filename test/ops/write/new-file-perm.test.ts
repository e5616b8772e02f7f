/**
 * A new file gets what a checkout by git gives it: 0666 or 0777 less the umask of the process that writes it (the
 * compiled CLI, run under each umask), keeping the owner's read and write and an executable's owner x. An existing
 * file keeps its own bits; a change of its executable state gives x where it has r, whatever the umask.
 * (New files were 0644 or 0755 under every umask, while the directories made for them followed it.)
 */
import { describe, expect, test } from "bun:test";
import { lstatSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../../helpers/binary";
import { tmpRepo } from "../../helpers/tmp-repo";

const PATCH = `diff --git a/new/plain.txt b/new/plain.txt
new file mode 100644
--- /dev/null
+++ b/new/plain.txt
@@ -0,0 +1 @@
+plain
diff --git a/new/tool.sh b/new/tool.sh
new file mode 100755
--- /dev/null
+++ b/new/tool.sh
@@ -0,0 +1 @@
+#!/bin/sh
diff --git a/old.sh b/old.sh
old mode 100644
new mode 100755
`;

function perm(root: string, path: string): string {
  return (lstatSync(join(root, path)).mode & 0o777).toString(8);
}

describe("permissions of the files a write makes", () => {
  for (const [umask, plain, tool, dir] of [
    ["022", "644", "755", "755"],
    ["077", "600", "700", "700"],
    ["002", "664", "775", "775"],
    ["277", "600", "700", "500"],
  ] as const) {
    // A umask that takes the owner's write (277) leaves the directories made under it closed to their maker: only
    // root can fill them (git itself cannot commit under it), so that case runs as root only.
    test.skipIf(umask === "277" && process.getuid?.() !== 0)(`under umask ${umask}: new files ${plain} and ${tool}, their directory ${dir}; an existing file keeps its bits`, async () => {
      await using repo = await tmpRepo();
      repo.write("old.sh", "echo old\n", 0o640);
      repo.commit();
      const patchFile = repo.beside(".diff");
      writeFileSync(patchFile, PATCH);
      const r = Bun.spawnSync(["bash", "-c", `umask ${umask} && exec "$0" "$@"`, requireBinary(), "apply", patchFile], { cwd: repo.root, stdout: "pipe", stderr: "pipe" });
      expect(r.stderr.toString()).toBe("");
      expect(r.exitCode).toBe(0);
      expect([perm(repo.root, "new/plain.txt"), perm(repo.root, "new/tool.sh"), perm(repo.root, "new")]).toEqual([plain, tool, dir]);
      // x follows r on the existing file (0640 became executable: 0750), not the umask
      expect(perm(repo.root, "old.sh")).toBe("750");
    });
  }
});
