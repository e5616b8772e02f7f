/** What the CLI prints reaches whoever reads it, whole, however slowly they read; a failed write is a failed command. */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { readFileSync, readdirSync } from "node:fs";
import { join } from "node:path";
import type { RepoPath } from "../../src/core/repo-path";
import { BINARY, cli, requireBinary } from "../helpers/binary";
import { tmpDir } from "../helpers/tmp-repo";
import { historyFixture, type HistoryFixture } from "../ops/history/helpers";

const SLOW_READER = join(import.meta.dir, "..", "fixtures", "slow-reader.ts");
const CONV = "conv_1700000000000_aaaaaaaaaaaa";
const FILES = 3000;

interface PipeRun {
  /** the exit status of worksnap (not of the reader) */
  code: number;
  stderr: string;
  /** what the reader received */
  received: Buffer;
}

/** `worksnap ARGS | READER` in a shell, so the pipe between them is an ordinary OS pipe. */
function piped(args: string[], reader: string[], dir: string): PipeRun {
  const status = join(dir, "status");
  const err = join(dir, "stderr");
  const received = join(dir, "received");
  const script = `"$@" 2>"$ERR" | ${reader.map((r) => `'${r}'`).join(" ")}; echo "\${PIPESTATUS[0]}" > "$STATUS"`;
  const r = Bun.spawnSync(["bash", "-c", script, "bash", requireBinary(), ...args], {
    env: { ...process.env, NO_COLOR: "1", ERR: err, STATUS: status, OUT: received },
    stdout: "pipe",
    stderr: "pipe",
  });
  if (r.exitCode !== 0) throw new Error(`the pipeline failed: ${r.stderr.toString()}`);
  let got: Buffer;
  try {
    got = readFileSync(received);
  } catch {
    got = Buffer.from(r.stdout);
  }
  return { code: Number(readFileSync(status, "utf8").trim()), stderr: readFileSync(err, "utf8"), received: got };
}

/** Into a reader that takes 4 KiB at a time and pauses after each read. */
const slowly = (args: string[], dir: string) => piped(args, [process.execPath, SLOW_READER, join(dir, "received"), "4096", "1"], dir);

/** The same command's output written straight into a file: what a reader must receive. */
function expected(args: string[], dir: string): Buffer {
  const file = join(dir, "expected");
  const r = Bun.spawnSync([BINARY, ...args], { env: { ...process.env, NO_COLOR: "1" }, stdout: Bun.file(file), stderr: "pipe" });
  expect(r.exitCode).toBe(0);
  return readFileSync(file);
}

describe("CLI output through pipes", () => {
  let h: HistoryFixture;
  let snapshotId: string;

  beforeAll(async () => {
    h = await historyFixture();
    for (let i = 0; i < FILES; i++) h.repo.write(`dir/file_${i}.txt`, `line ${i}\n`);
    const created = cli(["snapshot", "create", "--root", h.repo.root]);
    expect(created.code).toBe(0);
    snapshotId = created.stdout.trim();
    // one tool call that edits every file: FILES edits in the history, and a diff of FILES files
    await h.call(
      CONV,
      Array.from({ length: FILES }, (_, i) => ({ kind: "write" as const, path: `dir/file_${i}.txt` as RepoPath, bytes: new TextEncoder().encode(`line ${i}\nedited ${i}\n`), operation: "edit" as const })),
    );
  });
  afterAll(async () => {
    await h[Symbol.asyncDispose]();
  });

  test("history status --json longer than 64 KiB reaches a slow pipe whole, with exit 0 (it was cut at 65,536 bytes)", async () => {
    await using dir = tmpDir("ws-pipe-");
    const args = ["history", "status", "--json", "--root", h.repo.root];
    const want = expected(args, dir.path);
    expect(want.length).toBeGreaterThan(1024 * 1024);
    const run = slowly(args, dir.path);
    expect(run.code).toBe(0);
    expect(run.stderr).toBe("");
    expect(run.received.length).toBe(want.length);
    expect(run.received.equals(want)).toBe(true);
    expect(JSON.parse(run.received.toString()).entries).toHaveLength(FILES);
  });

  test("every command's human and JSON output arrives whole through a slow pipe", async () => {
    const commands = [
      ["history", "status"],
      ["snapshot", "diff", snapshotId],
      ["snapshot", "grep", "edited"], // several pages of matches, printed one after another
      ["snapshot", "list", "--recursive", "--json", "--limit", "10000", "--snapshot", snapshotId],
      ["snapshot", "changes", snapshotId],
    ];
    for (const c of commands) {
      await using dir = tmpDir("ws-pipe-");
      const args = [...c, "--root", h.repo.root];
      const want = expected(args, dir.path);
      const run = slowly(args, dir.path);
      expect({ args: c, code: run.code, bytes: run.received.length }).toEqual({ args: c, code: 0, bytes: want.length });
      expect(run.received.equals(want)).toBe(true);
    }
    await using dir = tmpDir("ws-pipe-");
    expect(expected(["snapshot", "grep", "edited", "--root", h.repo.root], dir.path).toString().split("\n").length).toBeGreaterThan(2000);
  });

  test("a reader that closes early (| head -c 10) ends worksnap with 141 and no message or stack trace", async () => {
    for (const c of [
      ["history", "status", "--json"],
      ["snapshot", "diff", snapshotId],
      ["snapshot", "grep", "edited"],
    ]) {
      await using dir = tmpDir("ws-pipe-");
      const run = piped([...c, "--root", h.repo.root], ["head", "-c", "10"], dir.path);
      expect({ args: c, code: run.code, stderr: run.stderr }).toEqual({ args: c, code: 141, stderr: "" });
      expect(run.received.length).toBe(10);
    }
  });

  test("a write that fails for another reason (a full disk: /dev/full) exits 74 and says so on stderr", () => {
    const r = Bun.spawnSync(["bash", "-c", `"$@" > /dev/full`, "bash", requireBinary(), "history", "status", "--json", "--root", h.repo.root], { stderr: "pipe" });
    expect(r.exitCode).toBe(74);
    const err = r.stderr.toString();
    expect(err).toBe("worksnap: cannot write to standard output: ENOSPC\n");
  });
});

describe("CLI output discipline", () => {
  test("the CLI writes only through cli/output.ts (process.stdout/stderr elsewhere would bypass the flush)", () => {
    const src = join(import.meta.dir, "..", "..", "src");
    const files = [join(src, "main.ts"), ...readdirSync(join(src, "cli"), { recursive: true, encoding: "utf8" }).filter((f) => f.endsWith(".ts")).map((f) => join(src, "cli", f))];
    const offenders = files
      .filter((f) => !f.endsWith(join("cli", "output.ts")))
      .filter((f) => /process\.(stdout|stderr)\b/.test(readFileSync(f, "utf8")));
    expect(offenders).toEqual([]);
  });
});
