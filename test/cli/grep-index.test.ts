/**
 * The grep index through the binary: `worksnap index build|status|clear`, the
 * same segments built with and without the native module, grep answers
 * unchanged by it, and a server that builds it in the background after it
 * starts, with the module or without it (on a worker thread), and builds
 * nothing with --index-budget 0.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync } from "node:fs";
import { join } from "node:path";
import { TRIGRAM_DIR } from "../../src/repo/trigram-index/store";
import { cli, mcpSession } from "../helpers/binary";
import { tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

async function fixture(): Promise<TmpRepo> {
  const repo = await tmpRepo();
  for (let i = 0; i < 30; i++) repo.write(`src/f${i}.ts`, `export function f${i}() { return ${i}; }\n${i % 10 === 0 ? "// handleRequest here\n" : ""}`);
  repo.write("copy/f0.ts", "export function f0() { return 0; }\n// handleRequest here\n"); // the same blob as src/f0.ts
  repo.write("logo.png", new Uint8Array([0x89, 0x50, 0, 1]));
  repo.commit();
  repo.write("untracked.ts", "handleRequest in an untracked file\n");
  return repo;
}

const segments = (root: string) => (existsSync(join(root, ".mcp", TRIGRAM_DIR)) ? readdirSync(join(root, ".mcp", TRIGRAM_DIR)).sort() : []);
const grepLines = (root: string) => cli(["snapshot", "grep", "handleRequest", "--root", root, "--json"]).json().matches.map((m: { path: string; line: number }) => `${m.path}:${m.line}`);

describe("worksnap index", () => {
  test("build, status and clear; grep answers the same with and without it", async () => {
    await using repo = await fixture();
    const before = grepLines(repo.root);
    expect(before).toEqual(["copy/f0.ts:2", "src/f0.ts:2", "src/f10.ts:2", "src/f20.ts:2", "untracked.ts:1"]);
    const built = cli(["index", "build", "--root", repo.root, "--json"]);
    expect(built.code).toBe(0);
    expect(built.json()).toMatchObject({ missing: 31, indexed: 31, left: 0, full: false, index_blobs: 31, index_blobs_covered: 31 });
    const status = cli(["index", "status", "--root", repo.root]);
    expect(status.stdout).toMatch(/^31 of git's 31 index blobs indexed; 31 blobs in 1 segments, [0-9.]+ MB on disk\n$/);
    expect(grepLines(repo.root)).toEqual(before);
    expect(cli(["index", "build", "--root", repo.root, "--json"]).json()).toMatchObject({ missing: 0, indexed: 0 });
    expect(cli(["index", "clear", "--root", repo.root]).stdout).toBe("removed 1 segments\n");
    expect(segments(repo.root)).toEqual([]);
    expect(grepLines(repo.root)).toEqual(before);
  });

  test("the TypeScript build (no native module) writes the segments the native one does", async () => {
    await using repo = await fixture();
    expect(cli(["index", "build", "--root", repo.root]).code).toBe(0);
    const native = segments(repo.root);
    cli(["index", "clear", "--root", repo.root]);
    expect(cli(["index", "build", "--root", repo.root], { env: { WORKSNAP_NATIVE: "0" } }).code).toBe(0);
    expect(segments(repo.root)).toEqual(native); // named by their bytes' SHA-256
  });

  test("usage errors exit 2", async () => {
    await using repo = await fixture();
    expect(cli(["index", "--root", repo.root]).code).toBe(2);
    expect(cli(["index", "rebuild", "--root", repo.root]).code).toBe(2);
    expect(cli(["index", "status", "--budget", "1G", "--root", repo.root]).code).toBe(2);
    const bad = cli(["index", "build", "--budget", "lots", "--root", repo.root]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain("--budget");
    expect(cli(["serve", "--index-budget", "-1", "--root", repo.root]).code).toBe(2);
  });
});

describe("a server's grep index", () => {
  test.each([
    ["on the native module's threads", {}],
    ["without the native module, on a worker thread: the segments the native build writes", { WORKSNAP_NATIVE: "0" }],
  ])("is built in the background after the server starts (%s), and answers stay the same", async (_, env: Record<string, string>) => {
    await using repo = await fixture();
    const before = grepLines(repo.root);
    expect(cli(["index", "build", "--root", repo.root]).code).toBe(0);
    const native = segments(repo.root);
    cli(["index", "clear", "--root", repo.root]);
    await using s = await mcpSession(repo.root, [], { env });
    const deadline = Date.now() + 60_000;
    while (cli(["index", "status", "--root", repo.root, "--json"]).json().index_blobs_covered < 31 && Date.now() < deadline) await Bun.sleep(100);
    expect(cli(["index", "status", "--root", repo.root, "--json"]).json()).toMatchObject({ index_blobs: 31, index_blobs_covered: 31 });
    expect(segments(repo.root)).toEqual(native); // named by their bytes' SHA-256
    const r = await s.call("snapshot_grep", { pattern: "handleRequest" });
    expect(r.matches.map((m: { path: string; line: number }) => `${m.path}:${m.line}`)).toEqual(before);
    // a commit adds blobs (the untracked file and a new one): indexed once the server is idle after a call
    repo.write("src/new.ts", "export const handleRequest = 1;\n");
    repo.commit("new");
    await s.call("snapshot_list", { path: "src" });
    while (cli(["index", "status", "--root", repo.root, "--json"]).json().index_blobs_covered < 33 && Date.now() < deadline) await Bun.sleep(100);
    expect(cli(["index", "status", "--root", repo.root, "--json"]).json()).toMatchObject({ index_blobs: 33, index_blobs_covered: 33 });
  }, 90_000);

  test("--index-budget 0 builds none", async () => {
    await using repo = await fixture();
    await using s = await mcpSession(repo.root, ["--index-budget", "0"]);
    await s.call("snapshot_grep", { pattern: "handleRequest" });
    await Bun.sleep(1000);
    expect(segments(repo.root)).toEqual([]);
  });
});
