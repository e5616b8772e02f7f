/**
 * Regression (a refused write on a full disk left `.mcp/tmp/*-blob` behind):
 * every store write that stages a temp file removes it when the disk fills
 * half way through; and git output spooled to a file (the index listing)
 * still comes whole when the disk is full. A real full file system: a small tmpfs, mounted for the
 * test (root on Linux, as the disk-full torture test).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { blobIdOf } from "../../src/core/hash";
import { writeFilesAtomic } from "../../src/repo/atomic-write";
import { FsBlobStore } from "../../src/repo/fs-blob-store";
import { git } from "../../src/repo/git";
import { TrigramIndex } from "../../src/repo/trigram-index/store";
import { readGitState, STATUS_ARGS } from "../../src/repo/fingerprint";
import { openRoot } from "../../src/repo/root";
import { runGit, tmpRepo } from "../helpers/tmp-repo";
import { tmpfsForTests } from "../helpers/tmpfs";

const disk = tmpfsForTests("2m", "ws-fulltemp-");
const canMount = disk.canMount;

/** A state directory on the mount with about `kb` KB left free. */
function nearlyFull(kb: number): string {
  disk.unfill();
  const stateDir = join(disk.path, `state-${Math.random().toString(36).slice(2, 8)}`);
  mkdirSync(join(stateDir, "tmp"), { recursive: true });
  disk.leave(kb);
  return stateDir;
}

function thrownCode(f: () => unknown): string | undefined {
  try {
    f();
    return undefined;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code;
  }
}

describe("a full disk leaves no temp file", () => {
  test.skipIf(!canMount)("a loose blob written half way (regression: .mcp/tmp/*-blob left behind)", () => {
    expect(disk.mounted).toBe(true);
    const stateDir = nearlyFull(64);
    const bytes = new Uint8Array(512 * 1024).fill(0x61);
    const store = new FsBlobStore(stateDir);
    expect(thrownCode(() => store.writeKnown(blobIdOf(bytes), bytes))).toBe("ENOSPC");
    expect(readdirSync(join(stateDir, "tmp"))).toEqual([]);
    // with room the same write goes through
    disk.unfill();
    store.writeKnown(blobIdOf(bytes), bytes);
    expect(readdirSync(join(stateDir, "tmp"))).toEqual([]);
  });

  test.skipIf(!canMount)("a snapshot's manifest and metadata, flushed together, the second file refused: neither is in place", async () => {
    expect(disk.mounted).toBe(true);
    const stateDir = nearlyFull(96);
    const manifest = join(stateDir, "a.manifest");
    const meta = join(stateDir, "a.json");
    const files = [
      { target: manifest, bytes: new Uint8Array(64 * 1024).fill(0x61) },
      { target: meta, bytes: new Uint8Array(256 * 1024).fill(0x62) },
    ];
    const code = await writeFilesAtomic(stateDir, files).then(() => undefined, (err: NodeJS.ErrnoException) => err.code);
    expect(code).toBe("ENOSPC");
    expect(readdirSync(stateDir).sort()).toEqual(["tmp"]);
    expect(readdirSync(join(stateDir, "tmp"))).toEqual([]);
    disk.unfill();
    await writeFilesAtomic(stateDir, files);
    expect(readdirSync(stateDir).sort()).toEqual(["a.json", "a.manifest", "tmp"]);
    expect(readdirSync(join(stateDir, "tmp"))).toEqual([]);
  });

  test.skipIf(!canMount)("a trigram index segment written half way", () => {
    expect(disk.mounted).toBe(true);
    const stateDir = nearlyFull(64);
    const index = new TrigramIndex(stateDir);
    expect(thrownCode(() => index.add(stateDir, new Uint8Array(512 * 1024).fill(1)))).toBe("ENOSPC");
    expect(readdirSync(join(stateDir, "tmp"))).toEqual([]);
  });
  test.skipIf(!canMount)("git output spooled to a full disk: the command runs again through a pipe, the answer is whole, nothing is left", async () => {
    expect(disk.mounted).toBe(true);
    await using repo = await tmpRepo();
    for (let f = 0; f < 300; f++) repo.write(`dir/file-${f}-${"x".repeat(100)}.txt`, `${f}\n`);
    repo.commit();
    const args = ["ls-files", "-s", "-v", "-z"];
    const piped = await git(args, { cwd: repo.root });
    expect(piped.stdout.length).toBeGreaterThan(40_000);
    const stateDir = nearlyFull(4); // room for a few KB of the listing at most
    const spooled = await git(args, { cwd: repo.root, spool: join(stateDir, "tmp", "listing") });
    expect(Buffer.from(spooled.stdout).equals(Buffer.from(piped.stdout))).toBe(true);
    expect(readdirSync(join(stateDir, "tmp"))).toEqual([]);
  });

  test.skipIf(!canMount)("git status on the index copy that cannot be written: the status of the user's index, whole; no lock left", async () => {
    expect(disk.mounted).toBe(true);
    disk.unfill();
    const root = join(disk.path, `repo-${Math.random().toString(36).slice(2, 8)}`);
    mkdirSync(root);
    runGit(root, ["init", "-q", "-b", "main"]);
    for (let f = 0; f < 40; f++) writeFileSync(join(root, `tracked-${f}-${"y".repeat(60)}.txt`), `${f}\n`);
    runGit(root, ["add", "-A"]);
    runGit(root, ["commit", "-q", "-m", "c"]);
    const status = async () => new TextDecoder().decode((await readGitState(openRoot(root))).status);
    await status();
    await status(); // the copy made, then its cache written
    writeFileSync(join(root, "untracked.txt"), "u\n"); // the next status writes the copy again
    nearlyFull(0);
    const plain = Bun.spawnSync(["git", ...STATUS_ARGS], { cwd: root, env: { ...process.env, GIT_OPTIONAL_LOCKS: "0" } }).stdout.toString();
    expect(plain).toContain("?? untracked.txt");
    expect(await status()).toBe(plain);
    expect(readdirSync(join(root, ".mcp", "git")).filter((n) => n.endsWith(".lock"))).toEqual([]);
    rmSync(root, { recursive: true, force: true });
  });
});
