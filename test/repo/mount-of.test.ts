/**
 * mountOf tells whether a rename between two directories stays on one mount: a bind mount shows the device
 * of the file system it reaches, so the device alone cannot tell (the write path stages by it).
 */
import { describe, expect, test } from "bun:test";
import { closeSync, mkdirSync, openSync, renameSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { mountOf } from "../../src/repo/mount-of";
import { mountsForTests } from "../helpers/mounts";
import { tmpDir } from "../helpers/tmp-repo";

const mounts = mountsForTests();

function withDirs<T>(dirs: string[], f: (fds: number[]) => T): T {
  const fds = dirs.map((d) => openSync(d, "r"));
  try {
    return f(fds);
  } finally {
    for (const fd of fds) closeSync(fd);
  }
}

describe("mountOf", () => {
  test("two directories of one mount are one mount", async () => {
    await using t = tmpDir();
    mkdirSync(join(t.path, "a/b"), { recursive: true });
    withDirs([t.path, join(t.path, "a/b")], ([x, y]) => expect(mountOf(x!)).toBe(mountOf(y!)));
  });

  test.skipIf(!mounts.canMount)("a bind mount is another mount of the same device, and a rename between them fails as mountOf says it must", async () => {
    await using t = tmpDir();
    mkdirSync(join(t.path, "vol"));
    using _vol = mounts.bind(join(t.path, "vol"));
    writeFileSync(join(t.path, "f"), "x");
    const [top, vol] = withDirs([t.path, join(t.path, "vol")], ([x, y]) => [mountOf(x!), mountOf(y!)]);
    expect(top).not.toBe(vol);
    expect(top!.split(":")[0]).toBe(vol!.split(":")[0]); // the same device
    expect(() => renameSync(join(t.path, "f"), join(t.path, "vol/f"))).toThrow(expect.objectContaining({ code: "EXDEV" }));
  });
});
