import { describe, expect, test } from "bun:test";
import { closeSync, openSync, ftruncateSync, writeSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

const TWO_GB = 2 * 1024 * 1024 * 1024;

describe("a 2 GB file", () => {
  test("is hashed and stored as a stream (bounded memory), and a line range reads it without loading it", async () => {
    await using repo = await tmpRepo();
    const fd = openSync(join(repo.root, "huge.log"), "w");
    writeSync(fd, "first line\nsecond line\n");
    ftruncateSync(fd, TWO_GB);
    closeSync(fd);
    repo.write("small.txt", "s\n");
    const proc = Bun.spawn([requireBinary(), "snapshot", "create", "--root", repo.root, "--json"], { stdout: "pipe", stderr: "pipe" });
    const out = await new Response(proc.stdout).text();
    expect(await proc.exited).toBe(0);
    const rss = proc.resourceUsage()?.maxRSS ?? 0;
    const snap = JSON.parse(out);
    expect(snap.manifest_stats).toEqual({ files: 2, bytes: TWO_GB + 2 });
    // Bun reports maxRSS in bytes; far below the file size proves streaming.
    expect(rss).toBeGreaterThan(0);
    expect(rss).toBeLessThan(400 * 1024 * 1024);

    const read = Bun.spawn(
      [requireBinary(), "snapshot", "file", "--root", repo.root, "huge.log", "--snapshot", snap.snapshot_id, "--start-line", "2", "--end-line", "2", "--json"],
      { stdout: "pipe" },
    );
    const file = JSON.parse(await new Response(read.stdout).text());
    expect(await read.exited).toBe(0);
    expect(file).toMatchObject({ content: "second line\n", start_line: 2, end_line: 2, size: TWO_GB });
    expect(read.resourceUsage()?.maxRSS ?? Number.POSITIVE_INFINITY).toBeLessThan(400 * 1024 * 1024);
  }, 120_000);
});
