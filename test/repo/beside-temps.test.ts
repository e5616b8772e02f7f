/**
 * The temporary names a write makes in the work tree itself (`.worksnap-{pid}-{16 hex}`) are noted per
 * directory before they are made, and the temp cleanup of a later process removes exactly those of a
 * process no longer running: never a live process's, never a name of another shape, never through a
 * symlink out of the root.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readFileSync, readdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { besideName } from "../../src/repo/beside-temps";
import { TreeHandles } from "../../src/repo/dir-handle";
import { cleanStaleTemps } from "../../src/repo/state-dir";
import { tmpDir } from "../helpers/tmp-repo";

/** The pid of a process that has ended. */
async function deadPid(): Promise<number> {
  const p = Bun.spawn(["true"]);
  await p.exited;
  return p.pid;
}

const hex16 = (n: number) => n.toString(16).padStart(16, "0");

describe("temporary names in the work tree", () => {
  test("each directory is noted once, before its first name, in the process's note in .mcp/tmp", async () => {
    await using t = tmpDir();
    mkdirSync(join(t.path, ".mcp/tmp"), { recursive: true });
    mkdirSync(join(t.path, "a b/c"), { recursive: true });
    const handles = TreeHandles.open(t.path);
    try {
      const names = [besideName(join(t.path, ".mcp"), handles.dir("a b/c")!), besideName(join(t.path, ".mcp"), handles.dir("a b/c")!), besideName(join(t.path, ".mcp"), handles.dir(".")!)];
      for (const n of names) expect(n).toMatch(new RegExp(`^\\.worksnap-${process.pid}-[0-9a-f]{16}$`));
      expect(new Set(names).size).toBe(3);
      expect(readFileSync(join(t.path, `.mcp/tmp/${process.pid}-beside`), "utf8")).toBe('"a b/c"\n"."\n');
    } finally {
      handles.close();
    }
  });

  test("the cleanup removes a dead process's names in the directories it noted, and nothing else", async () => {
    await using t = tmpDir();
    await using outside = tmpDir();
    const root = t.path;
    const dead = await deadPid();
    mkdirSync(join(root, ".mcp/tmp"), { recursive: true });
    mkdirSync(join(root, "a"));
    mkdirSync(join(root, "b/deep"), { recursive: true });
    symlinkSync(outside.path, join(root, "c"));
    const plant = (rel: string) => writeFileSync(join(root, rel), "x");
    const gone = [`a/.worksnap-${dead}-${hex16(1)}`, `b/deep/.worksnap-${dead}-${hex16(2)}`, `.worksnap-${dead}-${hex16(3)}`];
    const kept = [
      `a/.worksnap-${process.pid}-${hex16(4)}`, // a running process's
      `a/.worksnap-${dead}-short`, // another shape
      `a/.worksnap-${dead}-${hex16(5)}.txt`,
      `b/.worksnap-${dead}-${hex16(6)}`, // a directory the note does not name
      `a/notes.txt`,
    ];
    for (const p of [...gone, ...kept]) plant(p);
    writeFileSync(join(outside.path, `.worksnap-${dead}-${hex16(7)}`), "x"); // reached only through the symlink c
    writeFileSync(join(root, `.mcp/tmp/${dead}-beside`), ['"a"', '"b/deep"', '"c"', '"."', '"zz"', "42", '"b'].join("\n"));
    cleanStaleTemps(join(root, ".mcp"));
    for (const p of gone) expect([p, existsSync(join(root, p))]).toEqual([p, false]);
    for (const p of kept) expect([p, existsSync(join(root, p))]).toEqual([p, true]);
    expect(readdirSync(outside.path)).toEqual([`.worksnap-${dead}-${hex16(7)}`]);
    expect(existsSync(join(root, `.mcp/tmp/${dead}-beside`))).toBe(false);
  });
});
