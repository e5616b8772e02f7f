import { describe, expect, test } from "bun:test";
import { closeSync, mkdirSync, openSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { fileChunks, fileStream, readRegularWhole, writeAllPieces } from "../../src/repo/file-chunks";
import { nativeModule } from "../../src/repo/native";
import { tmpDir } from "../helpers/tmp-repo";

describe("bounded file reads", () => {
  test("chunks and the pull stream give the file's exact bytes, at any chunk size", async () => {
    await using dir = tmpDir();
    const bytes = new Uint8Array(100_003).map((_, i) => (i * 7 + 3) & 255);
    const file = join(dir.path, "f.bin");
    writeFileSync(file, bytes);
    for (const size of [1, 4096, 100_003, 1 << 20]) {
      const parts: Uint8Array[] = [];
      for (const c of fileChunks(file, size)) parts.push(Buffer.from(c)); // chunks share one buffer: copy
      expect(new Uint8Array(Buffer.concat(parts))).toEqual(bytes);
      expect(new Uint8Array(await new Response(fileStream(file, size)).arrayBuffer())).toEqual(bytes);
    }
    writeFileSync(file, "");
    expect([...fileChunks(file)]).toHaveLength(0);
    expect((await new Response(fileStream(file)).arrayBuffer()).byteLength).toBe(0);
  });

  test("regression: a slow consumer of a large stream holds one chunk, not the file (read-ahead without backpressure)", async () => {
    await using dir = tmpDir();
    const file = join(dir.path, "big.bin");
    writeFileSync(file, new Uint8Array(64 << 20));
    const reader = fileStream(file).getReader();
    const before = process.memoryUsage().rss;
    let seen = 0;
    for (let i = 0; i < 8; i++) {
      const { value } = await reader.read();
      seen += value?.length ?? 0;
      await Bun.sleep(20);
    }
    await reader.cancel();
    expect(seen).toBe(8 << 20);
    expect(process.memoryUsage().rss - before).toBeLessThan(32 << 20);
  });
});

describe("writeAllPieces", () => {
  test("every array in order, more of them than one writev takes, empty ones and a 3 MB one among them", async () => {
    await using d = tmpDir("ws-pieces-");
    const pieces: Uint8Array[] = [];
    for (let k = 0; k < 2_500; k++) pieces.push(k % 7 === 0 ? new Uint8Array(0) : Buffer.from(`piece ${k};`));
    pieces.splice(1_024, 0, Buffer.alloc(3 << 20, "z"));
    for (const [name, list] of [["many", pieces], ["none", []], ["one", [Buffer.from("x")]]] as const) {
      const path = join(d.path, name);
      const fd = openSync(path, "wx");
      try {
        await writeAllPieces(fd, list);
      } finally {
        closeSync(fd);
      }
      expect(readFileSync(path).equals(Buffer.concat(list))).toBe(true);
    }
  });
});

describe.skipIf(!nativeModule())("readRegularWhole", () => {
  test("a regular file's bytes whole, small or large, through a symlink too; null for a FIFO (never opened: its writer stays blocked), a directory or a missing path", async () => {
    await using d = tmpDir();
    const big = Buffer.alloc(3 << 20);
    for (let i = 0; i < big.length; i++) big[i] = (i * 13 + (i >> 11)) & 0xff;
    writeFileSync(join(d.path, "big"), big);
    writeFileSync(join(d.path, "small"), "abc");
    writeFileSync(join(d.path, "empty"), "");
    symlinkSync(join(d.path, "big"), join(d.path, "link"));
    mkdirSync(join(d.path, "dir"));
    Bun.spawnSync(["mkfifo", join(d.path, "fifo")]);
    expect(Buffer.from(readRegularWhole(join(d.path, "big"))!).equals(big)).toBe(true);
    expect(Buffer.from(readRegularWhole(join(d.path, "link"))!).equals(big)).toBe(true);
    expect(Buffer.from(readRegularWhole(join(d.path, "small"))!).toString()).toBe("abc");
    expect(readRegularWhole(join(d.path, "empty"))!.length).toBe(0);
    expect(readRegularWhole(join(d.path, "dir"))).toBeNull();
    expect(readRegularWhole(join(d.path, "missing"))).toBeNull();
    // a writer waiting for a reader: the FIFO is not opened, so it is still waiting afterwards
    const writer = Bun.spawn(["sh", "-c", `echo x > "${join(d.path, "fifo")}"`]);
    await Bun.sleep(100);
    expect(readRegularWhole(join(d.path, "fifo"))).toBeNull();
    await Bun.sleep(100);
    expect(writer.exitCode).toBeNull();
    expect(readFileSync(join(d.path, "fifo"), "utf8")).toBe("x\n");
    expect(await writer.exited).toBe(0);
  });
});
