/**
 * Files written together (a snapshot's manifest and metadata): each whole with
 * its exact mode, no temp file left, and targets on another file system than
 * `.mcp/tmp` written beside themselves instead (EXDEV).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { AtomicFileWriter } from "../../src/repo/atomic-stream";
import { writeFilesAtomic, type StagedFile } from "../../src/repo/atomic-write";
import { ensureStateDir } from "../../src/repo/state-dir";
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

/** `bytes` staged as a snapshot's manifest is (AtomicFileWriter.stage, synced every megabyte); a writer that fails is dropped, as the snapshot drops it. */
function stage(stateDir: string, bytes: Uint8Array): StagedFile {
  const writer = new AtomicFileWriter(stateDir, "manifest", 0o644, { writebackStep: 1 << 20, durableSteps: true });
  try {
    writer.write(bytes);
  } catch (err) {
    writer.abort();
    throw err;
  }
  return writer.stage().staged;
}

describe("a file staged before its name is known", () => {
  test("written and flushed meanwhile, then renamed with the others; discarded, or refused on a full disk, it leaves nothing", async () => {
    await using dir = tmpDir();
    mkdirSync(join(dir.path, "tmp"));
    mkdirSync(join(dir.path, "snapshots"));
    const bytes = new Uint8Array(2_000_003).fill(0x5a);
    const staged = stage(dir.path, bytes);
    const target = join(dir.path, "snapshots", "id.manifest");
    await writeFilesAtomic(dir.path, [
      { target, bytes: staged },
      { target: join(dir.path, "snapshots", "id.json"), bytes: new TextEncoder().encode("{}") },
    ]);
    expect(Buffer.from(readFileSync(target)).equals(Buffer.from(bytes))).toBe(true);
    expect(statSync(target).mode & 0o777).toBe(0o644);
    expect(readdirSync(join(dir.path, "snapshots")).sort()).toEqual(["id.json", "id.manifest"]);
    expect(readdirSync(join(dir.path, "tmp"))).toEqual([]);
    const unused = stage(dir.path, bytes);
    await unused.discard();
    expect(readdirSync(join(dir.path, "tmp"))).toEqual([]);
  });

  test.skipIf(!other.canMount)("a staged file the disk cannot hold: the rename of everything is refused, nothing is left", async () => {
    expect(other.mounted).toBe(true);
    const stateDir = join(other.path, `full-${Math.random().toString(36).slice(2, 8)}`);
    ensureStateDir(stateDir);
    const before = readdirSync(stateDir).sort();
    const code = await Promise.resolve()
      .then(() =>
        writeFilesAtomic(stateDir, [
          { target: join(stateDir, "a.manifest"), bytes: stage(stateDir, new Uint8Array(8 * 1024 * 1024).fill(1)) }, // twice the mount
          { target: join(stateDir, "a.json"), bytes: new TextEncoder().encode("{}") },
        ]),
      )
      .then(() => undefined, (err: NodeJS.ErrnoException) => err.code);
    expect(code).toBe("ENOSPC");
    expect(readdirSync(stateDir).sort()).toEqual(before);
    expect(readdirSync(join(stateDir, "tmp"))).toEqual([]);
  });
});
