import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { RepoPath } from "../../../src/core/repo-path";
import { applyChanges } from "../../../src/ops/write/write-path";
import { openWorkspace } from "../../../src/ops/workspace";
import { tmpRepo } from "../../helpers/tmp-repo";

const BUN = join(import.meta.dir, "..", "..", "..", "node_modules", ".bin", "bun");
const WORKER = join(import.meta.dir, "..", "..", "fixtures", "write-worker.ts");
const SIZE = 32 * 1024 * 1024;

/** Waits for a line on the child's stdout that satisfies `want`. */
async function waitForLine(reader: { read(): Promise<{ value?: Uint8Array; done: boolean }> }, want: (line: string) => boolean): Promise<void> {
  let buf = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`worker ended before the expected line; got: ${buf.slice(-500)}`);
    buf += new TextDecoder().decode(value);
    if (buf.split("\n").some(want)) return;
  }
}

/** The file holds exactly one of the whole contents (or the original): never a torn mix. */
function wholeContent(path: string): string {
  const b = readFileSync(path);
  if (b.toString() === "original\n") return "original";
  if (b.length !== SIZE) return `torn: ${b.length} bytes`;
  const first = b[0]!;
  if (b.indexOf(first === 0x41 ? 0x42 : 0x41) >= 0) return "torn: mixed bytes";
  return first === 0x41 ? "A" : "B";
}

describe("crash safety", () => {
  test("kill -9 in the middle of large writes leaves old or new bytes, never a torn file, and no temp file git can see", async () => {
    await using repo = await tmpRepo();
    repo.write("big.bin", "original\n");
    repo.commit();
    const seen = new Set<string>();
    for (let round = 0; round < 6; round++) {
      const child = Bun.spawn([BUN, WORKER, repo.root, String(SIZE)], { stdout: "pipe", stderr: "pipe" });
      const reader = (child.stdout as ReadableStream<Uint8Array>).getReader();
      // Let it finish one write, then kill it at a different moment of the next one each round.
      await waitForLine(reader, (l) => l === "begin 1");
      await Bun.sleep(round * 40);
      child.kill(9);
      await child.exited;
      const state = wholeContent(join(repo.root, "big.bin"));
      seen.add(state);
      expect(state).toMatch(/^(original|A|B)$/);
      // git sees only the file itself: temp files live in .mcp/tmp, which git ignores
      expect(repo.git("status", "--porcelain", "--untracked-files=all")).toMatch(/^( M big\.bin\n)?$/);
    }
    // The next process to open the repository removes the dead writers' temp files,
    // and takes over the lock a killed writer may have held.
    const ws = openWorkspace(repo.root);
    expect(readdirSync(join(repo.root, ".mcp", "tmp"))).toEqual([]);
    await applyChanges(ws, [{ kind: "write", path: "big.bin" as RepoPath, bytes: new TextEncoder().encode("after\n") }]);
    expect(readFileSync(join(repo.root, "big.bin"), "utf8")).toBe("after\n");
    expect(existsSync(join(repo.root, ".mcp", "locks", "worktree.lock"))).toBe(false);
    expect(seen.size).toBeGreaterThan(0);
  }, 240_000);
});
