/**
 * Where `snapshot export -o` puts a bundle: a file replaced whole, through a symlink to it; a pipe or a character
 * device written into, never replaced; anything else refused before a byte is read, and a failure to write named
 * by the output, not by a temporary file.
 */
import { describe, expect, test } from "bun:test";
import { createHash } from "node:crypto";
import { lstatSync, mkdirSync, readFileSync, readdirSync, readlinkSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, cli } from "../helpers/binary";
import { tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

const asRoot = process.getuid?.() === 0;

async function snapshotOf(repo: TmpRepo): Promise<string> {
  repo.write("a.txt", "alpha\n");
  repo.write("src/b.ts", "export const b = 1;\n");
  repo.commit();
  const r = cli(["snapshot", "create", "--root", repo.root]);
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

/** The bundle's bytes as the default export writes them into .mcp/exports. */
function reference(repo: TmpRepo, id: string): Buffer {
  const r = cli(["snapshot", "export", id, "--root", repo.root, "--json"]);
  expect(r.code).toBe(0);
  return readFileSync(join(repo.root, r.json().path));
}

const sha = (b: Uint8Array) => createHash("sha256").update(b).digest("hex");

/** A character device node of the test's own in `dir` (mknod, as root): were the fault back, it is this one replaced. */
function deviceNode(dir: string, name: string, major: number, minor: number): string {
  const node = join(dir, name);
  expect(Bun.spawnSync(["mknod", "-m", "666", node, "c", String(major), String(minor)]).exitCode).toBe(0);
  return node;
}

describe("snapshot export -o", () => {
  test.if(asRoot)("regression (a device replaced by a regular file): a character device is written into and stays a device", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir("ws-export-out-");
    const id = await snapshotOf(repo);
    const node = deviceNode(dir.path, "null", 1, 3); // /dev/null's numbers
    const r = cli(["snapshot", "export", id, "-o", node, "--root", repo.root]);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(`${sha(reference(repo, id))}  ${node}\n`);
    expect(lstatSync(node).isCharacterDevice()).toBe(true);
    // nothing left beside it or in .mcp/tmp
    expect(readdirSync(dir.path)).toEqual(["null"]);
    expect(readdirSync(join(repo.root, ".mcp", "tmp")).filter((n) => !n.startsWith("carry-"))).toEqual([]);
  });

  test("a FIFO is written into: its reader gets the bundle, the FIFO stays", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir("ws-export-out-");
    const id = await snapshotOf(repo);
    const fifo = join(dir.path, "bundle.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const reader = Bun.spawn(["cat", fifo], { stdout: "pipe" });
    const r = cli(["snapshot", "export", id, "-o", fifo, "--root", repo.root]);
    const got = new Uint8Array(await new Response(reader.stdout).arrayBuffer());
    expect(r.code).toBe(0);
    expect(sha(got)).toBe(sha(reference(repo, id)));
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  });

  // A name of the process's stdout, as /dev/stdout is (a symlink to /proc/self/fd/1), made in a directory of the
  // test's own: a build with the bug back replaces this link, not the machine's /dev/stdout (as it did as root).
  test("-o naming stdout, into a shell pipe: the bundle alone through the pipe, the summary on stderr", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir("ws-export-out-");
    const id = await snapshotOf(repo);
    symlinkSync("/proc/self/fd/1", join(dir.path, "stdout"));
    const p = Bun.spawnSync(["bash", "-c", `"$0" snapshot export "$1" -o "$3/stdout" --root "$2" 2>"$3/err" | cat > "$3/out.tar"`, BINARY, id, repo.root, dir.path]);
    expect(p.exitCode).toBe(0);
    const want = reference(repo, id);
    expect(sha(readFileSync(join(dir.path, "out.tar")))).toBe(sha(want));
    expect(readFileSync(join(dir.path, "err"), "utf8")).toBe(`${sha(want)}  /dev/stdout\n`);
    expect(readlinkSync(join(dir.path, "stdout"))).toBe("/proc/self/fd/1");
  });

  test("-o -: the bundle on stdout (a socket behind it, as a spawning runtime gives), the summary on stderr", async () => {
    await using repo = await tmpRepo();
    const id = await snapshotOf(repo);
    const r = Bun.spawnSync([BINARY, "snapshot", "export", id, "-o", "-", "--root", repo.root], { stdout: "pipe", stderr: "pipe" });
    expect(r.exitCode).toBe(0);
    const want = reference(repo, id);
    expect(sha(r.stdout)).toBe(sha(want));
    expect(r.stderr.toString()).toBe(`${sha(want)}  /dev/stdout\n`);
  });

  for (const native of ["1", "0"]) {
    test(`-o - into a pipe set non-blocking, read slowly: the whole bundle arrives (${native === "1" ? "the native writer thread" : "WORKSNAP_NATIVE=0"})`, async () => {
      await using repo = await tmpRepo();
      await using dir = tmpDir("ws-export-out-");
      // 6 MB of bundle, which a pipe (64 KiB) takes only as its reader empties it, and small files between the
      // large ones: many pieces to a write, which the pipe takes part of, ending mid-piece
      for (let i = 0; i < 6; i++) repo.write(`data/${i}.bin`, new Uint8Array(1 << 20).map((_, k) => (k * (i + 7) + (k >> 9)) & 255));
      for (let i = 0; i < 400; i++) repo.write(`data/${i % 7}/${i}.txt`, new Uint8Array(1 + ((i * 7919) % 9000)).map((_, k) => (i + k * 13) & 255));
      const id = await snapshotOf(repo);
      // perl-base's Fcntl sets O_NONBLOCK on the pipe, as a runtime or a shell sharing it may; then runs worksnap
      const setNonBlocking = `use Fcntl; fcntl(STDOUT, F_SETFL, fcntl(STDOUT, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV`;
      const script = `perl -e '${setNonBlocking}' -- "$0" snapshot export "$1" -o - --root "$2" 2>"$3/err" | (sleep 0.5; cat) > "$3/out.tar"`;
      const p = Bun.spawnSync(["bash", "-c", script, BINARY, id, repo.root, dir.path], { env: { ...process.env, WORKSNAP_NATIVE: native } });
      expect(readFileSync(join(dir.path, "err"), "utf8")).toBe(`${sha(reference(repo, id))}  /dev/stdout\n`);
      expect(p.exitCode).toBe(0);
      expect(sha(readFileSync(join(dir.path, "out.tar")))).toBe(sha(reference(repo, id)));
    });
  }

  test("-o - into a reader that stops early (| head): a quiet 141, as any output into a closed pipe", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir("ws-export-out-");
    for (let i = 0; i < 4; i++) repo.write(`data/${i}.bin`, new Uint8Array(1 << 20).map((_, k) => (k * (i + 5)) & 255));
    const id = await snapshotOf(repo);
    const p = Bun.spawnSync(["bash", "-c", `"$0" snapshot export "$1" -o - --root "$2" 2>"$3/err" | head -c 10 >/dev/null; echo "\${PIPESTATUS[0]}"`, BINARY, id, repo.root, dir.path]);
    expect(p.stdout.toString()).toBe("141\n");
    expect(readFileSync(join(dir.path, "err"), "utf8")).toBe("");
  });

  test("a symlink to a file: the file it names is replaced, the link stays", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir("ws-export-out-");
    const id = await snapshotOf(repo);
    writeFileSync(join(dir.path, "real.tar"), "old\n");
    symlinkSync("real.tar", join(dir.path, "link.tar"));
    const r = cli(["snapshot", "export", id, "-o", join(dir.path, "link.tar"), "--root", repo.root]);
    expect(r.code).toBe(0);
    expect(readlinkSync(join(dir.path, "link.tar"))).toBe("real.tar");
    expect(sha(readFileSync(join(dir.path, "real.tar")))).toBe(sha(reference(repo, id)));
  });

  test("a directory is refused before anything is written; a failure to write names the output, never a temporary file", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir("ws-export-out-");
    const id = await snapshotOf(repo);
    mkdirSync(join(dir.path, "sub"));
    const r = cli(["snapshot", "export", id, "-o", join(dir.path, "sub"), "--root", repo.root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`worksnap: INVALID_ARGUMENT: the output ${join(dir.path, "sub")} is a directory; name a file, a pipe or a character device such as /dev/stdout\n`);
    expect(readdirSync(join(dir.path, "sub"))).toEqual([]);
    // a parent that is a file
    writeFileSync(join(dir.path, "file"), "x");
    const under = cli(["snapshot", "export", id, "-o", join(dir.path, "file", "b.tar"), "--root", repo.root]);
    expect(under.code).toBe(1);
    expect(under.stderr).toStartWith(`worksnap: INVALID_ARGUMENT: cannot write the bundle to ${join(dir.path, "file", "b.tar")}: `);
    // a file in a directory that takes no new files (procfs)
    const proc = cli(["snapshot", "export", id, "-o", "/proc/version", "--root", repo.root]);
    expect(proc.code).toBe(1);
    expect(proc.stderr).toBe("worksnap: INVALID_ARGUMENT: cannot write the bundle to /proc/version: no file can be made in its directory\n");
    for (const out of [r, under, proc]) expect(out.stderr).not.toContain(".mcp/tmp");
  });

  test.if(asRoot)("a device that takes no bytes (a node of /dev/full's): TOO_LARGE naming it, and it stays a device", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir("ws-export-out-");
    const id = await snapshotOf(repo);
    const node = deviceNode(dir.path, "full", 1, 7); // /dev/full's numbers
    const full = cli(["snapshot", "export", id, "-o", node, "--root", repo.root]);
    expect(full.code).toBe(1);
    expect(full.stderr).toBe(`worksnap: TOO_LARGE: no space left writing the bundle to ${node}\n`);
    expect(lstatSync(node).isCharacterDevice()).toBe(true);
  });
});
