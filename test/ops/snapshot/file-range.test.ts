import { describe, expect, test } from "bun:test";
import { closeSync, openSync, truncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { sha256Hex } from "../../../src/core/hash";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { FILE_INLINE_CAP, WHOLE_READ_MAX, readFile } from "../../../src/ops/snapshot/file";
import { jsonCost } from "../../../src/ops/snapshot/line-slice";
import { writeFileOp } from "../../../src/ops/mutate/write-file";
import { mcpSession } from "../../helpers/binary";
import { tmpRepo } from "../../helpers/tmp-repo";
import { enc, wsOf } from "../../helpers/workspace";

const GB2 = 2 * 1024 * 1024 * 1024;
const HEAD = "first line\nsecond line\nthird line\n";

/** A sparse file of `size` bytes: `head` at the start, then a hole (NUL bytes) nobody wrote to disk. */
function sparse(path: string, head: string, size: number): void {
  const fd = openSync(path, "w");
  writeSync(fd, head);
  closeSync(fd);
  truncateSync(path, size);
}

function overwrite(path: string, at: number, text: string): void {
  const fd = openSync(path, "r+");
  writeSync(fd, text, at);
  closeSync(fd);
}

const lease = (r: { cache_hint: string; lease_id?: string }) => r.lease_id as string;

describe("huge ranges of huge files", () => {
  test("start_line 1, end_line 2 of a 2 GB sparse file reads only those lines: no blob id it did not compute, and the lease records the prefix it read", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    sparse(join(repo.root, "huge.log"), HEAD, GB2);
    using ws = wsOf(repo);
    const r = await readFile(ws, { mode: "worktree", path: "huge.log", start_line: 1, end_line: 2 });
    expect(r).toMatchObject({ content: "first line\nsecond line\n", start_line: 1, end_line: 2, size: GB2, truncated: false });
    // the whole file's hash would mean reading 2 GB: the answer carries neither blob nor total_lines
    expect(r.blob).toBeUndefined();
    expect(r.total_lines).toBeUndefined();
    const read = ws.leases.get(lease(r)).touched.partialRead("huge.log");
    expect(read).toEqual({ bytes: 23, sha256: sha256Hex("first line\nsecond line\n") });
    // a range over the hole is cut at one answer's worth and is binary: refused at once, not after reading 2 GB
    const hole = await readFile(ws, { mode: "worktree", path: "huge.log", start_line: 4, end_line: 5 }).catch((e) => e);
    expect(hole).toMatchObject({ code: "INVALID_ARGUMENT" });
    expect(hole.message).toContain("binary");
  });

  test("the lease guards what a partial read saw: a change there is STALE_LEASE, a change beyond it was never seen", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.write("big.log", "");
    repo.commit();
    const path = join(repo.root, "big.log");
    sparse(path, HEAD, WHOLE_READ_MAX + 4096); // modified, over the whole-read size: streamed
    using ws = wsOf(repo);
    const first = await readFile(ws, { mode: "worktree", path: "big.log", start_line: 1, end_line: 2 });
    expect(first.blob).toBeUndefined();
    // git status does not change when an already modified file changes again: only the touched record can tell
    overwrite(path, 3, "ST"); // inside the 23 bytes read
    const stale = await writeFileOp(ws, { mode: "worktree", path: "big.log", content: "replaced\n", lease_id: lease(first) }).catch((e) => e);
    expect(stale.code).toBe("STALE_LEASE");
    expect(stale.details.changed).toEqual([{ path: "big.log", read_bytes: 23, current_blob: expect.stringMatching(/^sha256:/) }]);

    const second = await readFile(ws, { mode: "worktree", path: "big.log", start_line: 1, end_line: 2 });
    overwrite(path, WHOLE_READ_MAX, "tail changed"); // beyond what was read
    const ok = await writeFileOp(ws, { mode: "worktree", path: "big.log", content: "replaced\n", lease_id: lease(second) });
    expect(ok.changed[0]?.path).toBe("big.log");
  });

  test("the blob id is given when it costs nothing more: a clean tracked file the store knows, a range that reached the end, snapshot mode", async () => {
    await using repo = await tmpRepo();
    const big = `${"x".repeat(99)}\n`.repeat(Math.ceil((WHOLE_READ_MAX + 1) / 100));
    repo.write("tracked.txt", big);
    repo.commit();
    using ws = wsOf(repo);
    const snap = await createSnapshot(ws, { paths: ["."] }); // the store now knows the index blob's sha256
    const blob = `sha256:${sha256Hex(big)}`;
    const clean = await readFile(ws, { mode: "worktree", path: "tracked.txt", start_line: 2, end_line: 3 });
    expect(clean).toMatchObject({ blob, content: `${"x".repeat(99)}\n`.repeat(2) });
    expect(ws.leases.get(lease(clean)).touched.get("tracked.txt")).toBe(blob);
    const frozen = await readFile(ws, { mode: "snapshot", snapshot_id: snap.snapshot_id, path: "tracked.txt", start_line: 1, end_line: 1 });
    expect(frozen.blob as string).toBe(blob);

    overwrite(join(repo.root, "tracked.txt"), 0, "y"); // modified now: the index blob no longer vouches for it
    const lines = big.length / 100;
    const toEnd = await readFile(ws, { mode: "worktree", path: "tracked.txt", start_line: lines - 1 });
    expect(toEnd).toMatchObject({ blob: `sha256:${sha256Hex(`y${big.slice(1)}`)}`, total_lines: lines, end_line: lines });
    const partial = await readFile(ws, { mode: "worktree", path: "tracked.txt", start_line: 1, end_line: 1 });
    expect(partial.blob).toBeUndefined();
  });

  test("start_line past the end of a streamed file names its line count", async () => {
    await using repo = await tmpRepo();
    const big = `${"z".repeat(999)}\n`.repeat(Math.ceil((WHOLE_READ_MAX + 1) / 1000));
    repo.write("big.txt", big);
    using ws = wsOf(repo);
    const e = await readFile(ws, { mode: "worktree", path: "big.txt", start_line: 100_000 }).catch((x) => x);
    expect(e).toMatchObject({ code: "INVALID_ARGUMENT", details: { arg: "start_line", total_lines: big.length / 1000 } });
  });

  test("TOO_LARGE says which end_line fits in one answer, and that range is answered over MCP (quotes and all)", async () => {
    await using repo = await tmpRepo();
    repo.write("wide.txt", `${"w".repeat(99)}\n`.repeat(5000)); // 500 KB, 100 bytes a line
    repo.write("quoted.json", `${'"k": "v\\\\",'.repeat(9)}\n`.repeat(600)); // under the cap in bytes (60 KB), over it as JSON
    using ws = wsOf(repo);
    const e = await readFile(ws, { mode: "worktree", path: "wide.txt" }).catch((x) => x);
    const fits = Math.floor(FILE_INLINE_CAP / jsonCost(enc(`${"w".repeat(99)}\n`)));
    expect(e).toMatchObject({ code: "TOO_LARGE", details: { fits_end_line: fits } });
    expect(e.message).toContain(`end_line ${fits} fits`);
    await using s = await mcpSession(repo.root);
    for (const path of ["wide.txt", "quoted.json"]) {
      const tooLarge = await s.callError("snapshot_file", { mode: "worktree", path });
      expect([path, tooLarge.code]).toEqual([path, "TOO_LARGE"]);
      const end = tooLarge.details.fits_end_line;
      const part = await s.call("snapshot_file", { mode: "worktree", path, start_line: 1, end_line: end });
      expect([path, part.end_line, part.truncated]).toEqual([path, end, false]);
      const more = await s.call("snapshot_file", { mode: "worktree", path, start_line: 1, end_line: end + 1 });
      expect([path, more.end_line, more.truncated]).toEqual([path, end, true]); // one line more is cut, still answered
    }
  });
});
