/**
 * Files written together (a snapshot's manifest and metadata): each whole with
 * its exact mode, no temp file left, and targets on another file system than
 * `.mcp/tmp` written beside themselves instead (EXDEV).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { writeFilesAtomic } from "../../src/repo/atomic-write";
import { tmpDir } from "../helpers/tmp-repo";
import { tmpfsForTests } from "../helpers/tmpfs";

const other = tmpfsForTests("4m", "ws-atomic-");

describe("writeFilesAtomic", () => {
  test("every file whole, replacing what was there, with the exact mode whatever the umask; no temp file left", async () => {
    await using dir = tmpDir();
    mkdirSync(join(dir.path, "tmp"));
    mkdirSync(join(dir.path, "snapshots"));
    const files = Array.from({ length: 5 }, (_, i) => ({ target: join(dir.path, "snapshots", `f${i}`), bytes: new Uint8Array(i * 100_003).fill(i) }));
    await writeFilesAtomic(dir.path, files.map((f) => ({ ...f, bytes: new Uint8Array([9]) })));
    const umask = process.umask(0o077);
    try {
      await writeFilesAtomic(dir.path, files, 0o644);
    } finally {
      process.umask(umask);
    }
    for (const f of files) {
      expect(Buffer.from(readFileSync(f.target)).equals(Buffer.from(f.bytes))).toBe(true);
      expect(statSync(f.target).mode & 0o777).toBe(0o644);
    }
    expect(readdirSync(join(dir.path, "tmp"))).toEqual([]);
  });

  test.skipIf(!other.canMount)("targets on another file system than the temp files: written beside them, whole", async () => {
    expect(other.mounted).toBe(true);
    await using dir = tmpDir();
    mkdirSync(join(dir.path, "tmp"));
    const target = join(other.path, "elsewhere");
    mkdirSync(target, { recursive: true });
    const files = [
      { target: join(target, "a.manifest"), bytes: new Uint8Array(300_000).fill(0x61) },
      { target: join(target, "a.json"), bytes: new TextEncoder().encode('{"done":true}') },
    ];
    await writeFilesAtomic(dir.path, files);
    for (const f of files) expect(Buffer.from(readFileSync(f.target)).equals(Buffer.from(f.bytes))).toBe(true);
    expect(readdirSync(target).sort()).toEqual(["a.json", "a.manifest"]);
    expect(readdirSync(join(dir.path, "tmp"))).toEqual([]);
  });
});
