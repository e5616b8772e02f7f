import { describe, expect, test } from "bun:test";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { exchangePaths } from "../../src/repo/exchange";
import { nativeModule } from "../../src/repo/native";

const native = nativeModule();

describe("exchangePaths", () => {
  test.skipIf(native === null)("swaps two names in one step: each inode moves to the other name", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-exchange-"));
    try {
      writeFileSync(join(dir, "a"), "A");
      writeFileSync(join(dir, "sub-b"), "B");
      const [ia, ib] = [statSync(join(dir, "a")).ino, statSync(join(dir, "sub-b")).ino];
      expect(exchangePaths(join(dir, "a"), join(dir, "sub-b"))).toBe(true);
      expect(readFileSync(join(dir, "a"), "utf8")).toBe("B");
      expect(readFileSync(join(dir, "sub-b"), "utf8")).toBe("A");
      expect([statSync(join(dir, "a")).ino, statSync(join(dir, "sub-b")).ino]).toEqual([ib, ia]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("a missing side is refused (the caller renames instead) and nothing changes", () => {
    const dir = mkdtempSync(join(tmpdir(), "ws-exchange-"));
    try {
      writeFileSync(join(dir, "a"), "A");
      expect(exchangePaths(join(dir, "a"), join(dir, "missing"))).toBe(false);
      expect(readFileSync(join(dir, "a"), "utf8")).toBe("A");
      // still supported afterwards: ENOENT is the paths' fault, not the platform's
      if (native) {
        writeFileSync(join(dir, "b"), "B");
        expect(exchangePaths(join(dir, "a"), join(dir, "b"))).toBe(true);
      }
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test.skipIf(native === null)("the native call reports the errno: ENOENT for a missing path", () => {
    expect(native!.exchange("/nonexistent-ws-a", "/nonexistent-ws-b")).toBe(2);
  });
});
