/**
 * appendLines: whole lines at the end of a file of lines, flushed; a line a crash left unfinished is cut off
 * first; a write the disk refuses half way leaves the file exactly as it was (a real full tmpfs, as root).
 */
import { describe, expect, test } from "bun:test";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { appendLines } from "../../src/repo/append-lines";
import { tmpDir } from "../helpers/tmp-repo";
import { tmpfsForTests } from "../helpers/tmpfs";

const disk = tmpfsForTests("2m", "ws-append-");
const bytes = (s: string) => new TextEncoder().encode(s);

describe("appendLines", () => {
  test("lines land at the end, in order; the answer is the new length", async () => {
    await using dir = tmpDir();
    const f = join(dir.path, "log");
    writeFileSync(f, "one\n");
    expect(appendLines(f, bytes("two\nthree\n"))).toEqual({ size: 14, cut: 0 });
    expect(appendLines(f, bytes("é\n"))).toEqual({ size: 17, cut: 0 });
    expect(readFileSync(f, "utf8")).toBe("one\ntwo\nthree\né\n");
    // an empty file, and nothing to add
    writeFileSync(f, "");
    expect(appendLines(f, bytes("a\n"))).toEqual({ size: 2, cut: 0 });
    expect(appendLines(f, bytes(""))).toEqual({ size: 2, cut: 0 });
    expect(readFileSync(f, "utf8")).toBe("a\n");
    expect(() => appendLines(f, bytes("no newline"))).toThrow("must end with a newline");
    expect(readFileSync(f, "utf8")).toBe("a\n");
  });

  test("a last line without its newline (an append cut short) is cut off before the new lines, however long it is", async () => {
    await using dir = tmpDir();
    const f = join(dir.path, "log");
    const whole = `${"x".repeat(100)}\n`.repeat(3);
    for (const tornLength of [1, 5, 65_535, 65_536, 65_537, 200_000]) {
      writeFileSync(f, whole + "{".padEnd(tornLength, "y"));
      expect(appendLines(f, bytes("next\n"))).toEqual({ size: whole.length + 5, cut: tornLength });
      expect(readFileSync(f, "utf8")).toBe(`${whole}next\n`);
    }
    // nothing but an unfinished line (longer than one read from the end)
    writeFileSync(f, "z".repeat(150_000));
    expect(appendLines(f, bytes("first\n"))).toEqual({ size: 6, cut: 150_000 });
    expect(readFileSync(f, "utf8")).toBe("first\n");
  });

  test("a missing file is an error, not a new file", async () => {
    await using dir = tmpDir();
    expect(() => appendLines(join(dir.path, "none"), bytes("a\n"))).toThrow(expect.objectContaining({ code: "ENOENT" }));
  });

  test.skipIf(!disk.canMount)("the disk filling half way through the lines leaves the file as it was; with room it appends", () => {
    expect(disk.mounted).toBe(true);
    const f = join(disk.path, "log");
    const before = `${"entry ".repeat(20)}\n`.repeat(50);
    writeFileSync(f, `${before}torn`);
    const lines = bytes(`${"new line ".repeat(40)}\n`.repeat(2_000)); // about 720 KB
    disk.leave(200);
    let err: NodeJS.ErrnoException | null = null;
    try {
      appendLines(f, lines);
    } catch (e) {
      err = e as NodeJS.ErrnoException;
    }
    expect(err?.code).toBe("ENOSPC");
    expect((err as { torn?: boolean }).torn).toBeUndefined();
    // the unfinished line was cut (it is no entry) and nothing of the refused lines stayed
    expect(readFileSync(f, "utf8")).toBe(before);
    disk.unfill();
    expect(appendLines(f, lines).size).toBe(before.length + lines.length);
    expect(readFileSync(f).subarray(before.length).equals(Buffer.from(lines))).toBe(true);
  });
});
