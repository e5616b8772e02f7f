import { describe, expect, test } from "bun:test";
import { readFileSync, rmSync, utimesSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY as BIN, cliUnprivileged, handToUnprivileged, unprivileged } from "../helpers/binary";
import { tmpRepo, type TmpRepo } from "../helpers/tmp-repo";


function create(root: string, env: Record<string, string> = {}): { code: number; out: any } {
  const r = Bun.spawnSync([BIN, "snapshot", "create", "--root", root, "--json"], { env: { ...process.env, ...env } });
  return { code: r.exitCode, out: JSON.parse(r.stdout.toString() || "{}") };
}

/** Files of every kind the capture treats differently: clean, modified, untracked, exec, symlink, large, CRLF. */
function seed(repo: TmpRepo): void {
  for (let i = 0; i < 300; i++) repo.write(`src/m${i}/f${i}.ts`, `export const v${i} = ${i};\n`.repeat(1 + (i % 7)));
  repo.write("bin/tool", "#!/bin/sh\n", 0o755);
  repo.write("crlf.txt", "a\r\nb\r\n");
  repo.write("large.bin", new Uint8Array(9 * 1024 * 1024).map((_, i) => (i * 7) & 255)); // over the stream threshold
  repo.symlink("link", "crlf.txt");
  repo.commit();
  writeFileSync(join(repo.root, "src/m1/f1.ts"), "modified\n");
  rmSync(join(repo.root, "src/m2/f2.ts"));
  repo.write("untracked/new.txt", "new\n");
}

describe("the native module and the TypeScript paths capture the same snapshot", () => {
  for (const format of ["sha1", "sha256"] as const)
  test(`cold and warm, same id with WORKSNAP_NATIVE=0 as with the module (a ${format === "sha1" ? "SHA-1" : "SHA-256"} repository)`, async () => {
    await using repo = await tmpRepo({ git: false });
    repo.git("init", "-q", `--object-format=${format}`, "-b", "main");
    seed(repo);
    const withNative = create(repo.root);
    expect(withNative.code).toBe(0);
    rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
    const without = create(repo.root, { WORKSNAP_NATIVE: "0" });
    expect(without.code).toBe(0);
    expect(without.out.snapshot_id).toBe(withNative.out.snapshot_id);
    expect(without.out.manifest_stats).toEqual(withNative.out.manifest_stats);
    expect(create(repo.root).out.snapshot_id).toBe(withNative.out.snapshot_id); // warm, over the TypeScript path's store
  });

  test("content git converts on checkout (eol=crlf) is verified, stored and read back byte for byte", async () => {
    await using repo = await tmpRepo();
    repo.write(".gitattributes", "*.txt eol=crlf\n");
    for (let i = 0; i < 20; i++) repo.write(`t${i}.txt`, `line ${i}\nsecond\n`);
    repo.commit();
    // re-checkout so the work tree holds CRLF while the blobs hold LF; git calls the tree clean
    for (let i = 0; i < 20; i++) rmSync(join(repo.root, `t${i}.txt`));
    repo.git("checkout", "--", ".");
    expect(repo.git("status", "--porcelain")).toBe("");
    expect(readFileSync(join(repo.root, "t3.txt"), "utf8")).toBe("line 3\r\nsecond\r\n");
    const a = create(repo.root);
    rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
    const b = create(repo.root, { WORKSNAP_NATIVE: "0" });
    expect(a.out.snapshot_id).toBe(b.out.snapshot_id);
    const r = Bun.spawnSync([BIN, "snapshot", "file", "t3.txt", "--snapshot", a.out.snapshot_id, "--root", repo.root]);
    expect(r.stdout.toString()).toBe("line 3\r\nsecond\r\n");
  });

  test("an unreadable tracked file is skipped and named, by the native module and the TypeScript path alike", async () => {
    await using repo = await tmpRepo();
    repo.write("ok.txt", "ok\n");
    repo.write("secret.txt", "s\n");
    repo.commit();
    utimesSync(join(repo.root, "secret.txt"), 1_600_000_000, 1_600_000_000); // long before the index: not racily clean
    // git refreshes the index's stat data where it can read the file: git status then calls it clean, so the
    // capture reads it as a clean tracked file (the native hash job, or FileHasher's clean path). Root reads it
    // after handing the tree over (the owner is in the stat data); anyone else before the chmod, whose new ctime
    // git is told not to compare.
    if (process.getuid?.() === 0) {
      handToUnprivileged(repo.root, ["secret.txt"]);
      repo.git("-c", "safe.directory=*", "update-index", "--refresh");
    } else {
      repo.git("config", "core.trustctime", "false");
      repo.git("update-index", "--refresh");
      handToUnprivileged(repo.root, ["secret.txt"]);
    }
    const status = Bun.spawnSync(unprivileged(["git", "-C", repo.root, "status", "--porcelain"]), { env: { ...process.env, HOME: "/tmp" } });
    expect(status.stdout.toString()).toBe("");
    for (const native of ["1", "0"]) {
      rmSync(join(repo.root, ".mcp"), { recursive: true, force: true }); // cold: the clean file must be read
      const r = cliUnprivileged(["snapshot", "create", "--root", repo.root, "--json"], { WORKSNAP_NATIVE: native });
      expect([native, r.code]).toEqual([native, 0]);
      expect(r.json()).toMatchObject({ manifest_stats: { files: 1, unreadable: 1 }, unreadable: ["secret.txt"], unreadable_total: 1 });
    }
  });
});

describe("the TypeScript export (no native module) reads the work tree as the native one does", () => {
  const exportJson = (root: string, id: string, out: string, env: Record<string, string>) => {
    const r = Bun.spawnSync([BIN, "snapshot", "export", id, "-o", out, "--root", root, "--json"], { env: { ...process.env, ...env } });
    expect([r.exitCode, r.stderr.toString()]).toEqual([0, ""]);
    return JSON.parse(r.stdout.toString());
  };

  test("the same bundle as the native export; files changed, replaced by a FIFO or a symlink, or removed after the snapshot still export the snapshot's bytes", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const id = create(repo.root).out.snapshot_id as string;
    const native = exportJson(repo.root, id, join(repo.root, "native.tar"), {});
    const ts = exportJson(repo.root, id, join(repo.root, "ts.tar"), { WORKSNAP_NATIVE: "0" });
    expect(ts.sha256).toBe(native.sha256);
    expect(readFileSync(join(repo.root, "ts.tar")).equals(readFileSync(join(repo.root, "native.tar")))).toBe(true);
    // the work tree moves on: same size other bytes, a FIFO, a symlink and a file holding a symlink's text in place
    writeFileSync(join(repo.root, "src/m3/f3.ts"), "X".repeat(readFileSync(join(repo.root, "src/m3/f3.ts")).length));
    rmSync(join(repo.root, "src/m4/f4.ts"));
    expect(Bun.spawnSync(["mkfifo", join(repo.root, "src/m4/f4.ts")]).exitCode).toBe(0); // never opened for a blocking read
    rmSync(join(repo.root, "src/m5/f5.ts"));
    repo.symlink("src/m5/f5.ts", "../m3/f3.ts");
    rmSync(join(repo.root, "link"));
    writeFileSync(join(repo.root, "link"), "crlf.txt");
    rmSync(join(repo.root, "crlf.txt"));
    const after = exportJson(repo.root, id, join(repo.root, "after.tar"), { WORKSNAP_NATIVE: "0" });
    expect(after.sha256).toBe(native.sha256);
  }, 60_000);
});
