import { describe, expect, test } from "bun:test";
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { requireBinary } from "../helpers/binary";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

const TWO_GB = 2 * 1024 * 1024 * 1024;

/**
 * Runs a command under GNU time and returns its stdout and peak RSS in bytes. The runner's own
 * resourceUsage() is not usable here: bun test runs every file in one process, and the maximum it
 * reports covers every child that process has reaped (regression: a 1 GB message test's server).
 */
async function runMeasured(cmd: string[], dir: string): Promise<{ code: number; stdout: string; rss: number }> {
  const out = join(dir, `rss-${Date.now()}`);
  const proc = Bun.spawn(["/usr/bin/time", "-f", "%M", "-o", out, ...cmd], { stdout: "pipe", stderr: "pipe" });
  const stdout = await new Response(proc.stdout).text();
  const code = await proc.exited;
  const kb = Number(readFileSync(out, "utf8").trim().split("\n").pop());
  return { code, stdout, rss: kb * 1024 };
}

describe("a 2 GB file", () => {
  test("is hashed and stored as a stream (bounded memory), and a line range reads it without loading it", async () => {
    await using repo = await tmpRepo();
    await using scratch = tmpDir("ws-rss-");
    const fd = openSync(join(repo.root, "huge.log"), "w");
    writeSync(fd, "first line\nsecond line\n");
    ftruncateSync(fd, TWO_GB);
    closeSync(fd);
    repo.write("small.txt", "s\n");
    const created = await runMeasured([requireBinary(), "snapshot", "create", "--root", repo.root, "--json"], scratch.path);
    expect(created.code).toBe(0);
    const snap = JSON.parse(created.stdout);
    expect(snap.manifest_stats).toEqual({ files: 2, bytes: TWO_GB + 2 });
    // Far below the file size proves streaming.
    expect(created.rss).toBeGreaterThan(0);
    expect(created.rss).toBeLessThan(400 * 1024 * 1024);

    const read = await runMeasured(
      [requireBinary(), "snapshot", "file", "--root", repo.root, "huge.log", "--snapshot", snap.snapshot_id, "--start-line", "2", "--end-line", "2", "--json"],
      scratch.path,
    );
    expect(read.code).toBe(0);
    expect(JSON.parse(read.stdout)).toMatchObject({ content: "second line\n", start_line: 2, end_line: 2, size: TWO_GB });
    expect(read.rss).toBeLessThan(400 * 1024 * 1024);
  }, 120_000);
});
