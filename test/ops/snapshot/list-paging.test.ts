import { describe, expect, test } from "bun:test";
import { compareUtf8 } from "../../../src/core/byte-order";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { LIST_BYTE_BUDGET, listEntries, type ListArgs, type ListResult } from "../../../src/ops/snapshot/list";
import { mcpSession } from "../../helpers/binary";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";
import type { Workspace } from "../../../src/ops/workspace";

/** Every page of a listing, following the cursor; checks each page stays within the byte budget. */
async function allPages(ws: Workspace, args: ListArgs): Promise<{ pages: ListResult[]; paths: string[] }> {
  const pages: ListResult[] = [];
  let cursor: string | undefined;
  do {
    const page = await listEntries(ws, { ...args, cursor });
    pages.push(page);
    expect(JSON.stringify(page.entries).length).toBeLessThanOrEqual(LIST_BYTE_BUDGET + 2);
    expect(page.truncated).toBe(page.cursor !== undefined);
    cursor = page.cursor;
  } while (cursor);
  return { pages, paths: pages.flatMap((p) => p.entries.map((e) => e.path)) };
}

function manyRootEntries(repo: TmpRepo, n: number): string[] {
  const names: string[] = [];
  for (let i = 0; i < n; i++) {
    // long names make the byte budget, not the limit, end a page
    const name = `entry-${String(i).padStart(4, "0")}-${"n".repeat(60)}.txt`;
    repo.write(name, `${i}\n`);
    names.push(name);
  }
  return names.sort(compareUtf8);
}

describe("snapshot_list pages like every other reader", () => {
  test("a root of 562 entries: the byte cap no longer strands entries, the cursor reaches all of them in order, once each", async () => {
    await using repo = await tmpRepo();
    const names = manyRootEntries(repo, 562);
    repo.commit();
    using ws = wsOf(repo);
    const one = await listEntries(ws, { mode: "worktree", limit: 2000 });
    expect(one.total).toBe(562);
    expect(one.truncated).toBe(true); // the byte budget ended the page...
    expect(one.entries.length).toBeLessThan(562);
    expect(one.cursor).toBeString(); // ...and says how to go on
    const { pages, paths } = await allPages(ws, { mode: "worktree", limit: 2000 });
    expect(paths).toEqual(names);
    expect(pages.length).toBeGreaterThan(1);
    expect(pages.every((p) => p.total === 562)).toBe(true);

    const snap = await createSnapshot(ws, { paths: ["."] });
    const frozen = await allPages(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, limit: 100 });
    expect(frozen.paths).toEqual(names);
    expect(frozen.pages.length).toBe(6);
  });

  test("recursive listings page the same way, and the lease touches exactly what was returned plus implicit parents", async () => {
    await using repo = await tmpRepo();
    for (let d = 0; d < 5; d++) for (let f = 0; f < 7; f++) repo.write(`dir${d}/sub/f${f}.ts`, `${d}${f}\n`);
    repo.commit();
    using ws = wsOf(repo);
    const first = await listEntries(ws, { mode: "worktree", recursive: true, limit: 8 });
    expect(first.total).toBe(5 * 7 + 10); // 35 files, 5 dirs, 5 subdirs
    const lease = first.cache_hint === "until_dirty" ? first.lease_id : "";
    const paths = first.entries.map((e) => e.path);
    let cursor = first.cursor;
    while (cursor) {
      const page = await listEntries(ws, { mode: "worktree", recursive: true, limit: 8, cursor, lease_id: lease });
      paths.push(...page.entries.map((e) => e.path));
      cursor = page.cursor;
    }
    expect(paths.length).toBe(45);
    expect(new Set(paths).size).toBe(45);
    expect([...paths].sort(compareUtf8)).toEqual(paths);
    const touched = [...ws.leases.get(lease).touched.keys()].sort(compareUtf8);
    expect(touched).toEqual(paths);
  });

  test("a cursor is bound to its query and state", async () => {
    await using repo = await tmpRepo();
    manyRootEntries(repo, 30);
    repo.commit();
    using ws = wsOf(repo);
    const first = await listEntries(ws, { mode: "worktree", limit: 10 });
    const other = await listEntries(ws, { mode: "worktree", limit: 10, recursive: true, cursor: first.cursor }).catch((e) => e);
    expect(other.code).toBe("INVALID_ARGUMENT");
    expect(other.message).toContain("different query");
    repo.write("new.txt", "changes the state\n");
    const moved = await listEntries(ws, { mode: "worktree", limit: 10, cursor: first.cursor }).catch((e) => e);
    expect(moved.code).toBe("INVALID_ARGUMENT");
    expect(moved.message).toContain("another state");
  });
});

describe("snapshot_list finds files by glob", () => {
  function seed(repo: TmpRepo): void {
    for (const p of ["src/a.ts", "src/a.test.ts", "src/deep/x/b.test.ts", "src/index.ts", "src/lib/index.js", "lib/index.ts", "README.md", "docs/guide.md", "a.test.ts.bak"]) {
      repo.write(p, `${p}\n`);
    }
    repo.commit();
  }

  test("a glob without / matches names at any depth, one with / whole repo-relative paths (grep's include rules); files only, under path", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    using ws = wsOf(repo);
    const paths = async (args: Partial<ListArgs>) => (await allPages(ws, { mode: "worktree", ...args })).paths;
    expect(await paths({ glob: "*.test.ts" })).toEqual(["src/a.test.ts", "src/deep/x/b.test.ts"]);
    expect(await paths({ glob: "**/*.test.ts" })).toEqual(["src/a.test.ts", "src/deep/x/b.test.ts"]);
    expect(await paths({ glob: "src/**/index.*" })).toEqual(["src/index.ts", "src/lib/index.js"]);
    expect(await paths({ glob: "*.md" })).toEqual(["README.md", "docs/guide.md"]);
    expect(await paths({ glob: "index.*", path: "src" })).toEqual(["src/index.ts", "src/lib/index.js"]);
    expect(await paths({ glob: "*.nothing" })).toEqual([]);
    const snap = await createSnapshot(ws, { paths: ["."] });
    expect(await paths({ mode: "snapshot", snapshot_id: snap.snapshot_id, glob: "*.test.ts" })).toEqual(["src/a.test.ts", "src/deep/x/b.test.ts"]);
  });

  test("glob listings page with the cursor, and a cursor from another glob is refused", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 25; i++) repo.write(`pkg${i % 3}/mod${i}/index.test.ts`, `${i}\n`);
    repo.write("pkg0/other.ts", "x\n");
    repo.commit();
    using ws = wsOf(repo);
    const { pages, paths } = await allPages(ws, { mode: "worktree", glob: "*.test.ts", limit: 4 });
    expect(paths.length).toBe(25);
    expect(pages.length).toBe(7);
    expect(pages[0]?.total).toBe(25);
    const e = await listEntries(ws, { mode: "worktree", glob: "*.ts", limit: 4, cursor: pages[0]?.cursor }).catch((x) => x);
    expect(e.code).toBe("INVALID_ARGUMENT");
  });

  test("over MCP: the schema carries cursor and glob, and the description says how to continue", async () => {
    await using repo = await tmpRepo();
    manyRootEntries(repo, 12);
    repo.commit();
    await using s = await mcpSession(repo.root);
    const tools = await s.client.listTools();
    const list = tools.tools.find((t) => t.name === "snapshot_list")!;
    expect(Object.keys(list.inputSchema.properties ?? {})).toEqual(expect.arrayContaining(["cursor", "glob"]));
    expect(list.description).toContain("cursor");
    const first = await s.call("snapshot_list", { mode: "worktree", limit: 5 });
    const second = await s.call("snapshot_list", { mode: "worktree", limit: 5, cursor: first.cursor });
    expect(second.entries[0].path > first.entries[4].path).toBe(true);
    const found = await s.call("snapshot_list", { mode: "worktree", glob: "entry-000*" });
    expect(found.entries.map((e: any) => e.path)).toHaveLength(10);
  });
});
