/**
 * `snapshot import` reads a bundle from start to end once, so it takes one from a pipe as well as from a file:
 * `export -o - | import -` moves a snapshot between repositories (or machines, through ssh) with no file between.
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { BINARY, cli } from "../helpers/binary";
import { tmpDir, tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

async function source(repo: TmpRepo): Promise<string> {
  repo.write("a.txt", "alpha\n");
  // over a pipe's 64 KiB, so both ends wait for each other
  for (let i = 0; i < 3; i++) repo.write(`data/${i}.bin`, new Uint8Array(1 << 20).map((_, k) => (k * (i + 3) + (k >> 11)) & 255));
  repo.commit();
  const r = cli(["snapshot", "create", "--root", repo.root]);
  expect(r.code).toBe(0);
  return r.stdout.trim();
}

/** The snapshot as the destination holds it: its id, and one file's bytes read back from it. */
function held(root: string, id: string): { id: string; a: string } {
  const info = cli(["snapshot", "info", id, "--root", root, "--json"]);
  const file = cli(["snapshot", "file", "a.txt", "--snapshot", id, "--root", root, "--json"]);
  return { id: info.code === 0 ? info.json().snapshot_id : `exit ${info.code}`, a: file.code === 0 ? file.json().content : `exit ${file.code}` };
}

describe("snapshot import from a stream", () => {
  test("export -o - | import -: the snapshot moves between repositories through a pipe", async () => {
    await using from = await tmpRepo();
    await using to = await tmpRepo();
    const id = await source(from);
    const p = Bun.spawnSync(["bash", "-c", `"$0" snapshot export "$1" -o - --root "$2" 2>/dev/null | "$0" snapshot import - --root "$3"`, BINARY, id, from.root, to.root]);
    expect(p.stderr.toString()).toBe("");
    expect(p.exitCode).toBe(0);
    expect(p.stdout.toString()).toBe(`${id}\n`);
    expect(held(to.root, id)).toEqual({ id, a: "alpha\n" });
  });

  test("a FIFO an export writes into, and a stdin set non-blocking that fills slowly", async () => {
    await using from = await tmpRepo();
    await using to = await tmpRepo();
    await using again = await tmpRepo();
    await using dir = tmpDir("ws-import-stream-");
    const id = await source(from);
    const fifo = join(dir.path, "bundle.fifo");
    expect(Bun.spawnSync(["mkfifo", fifo]).exitCode).toBe(0);
    const writer = Bun.spawn([BINARY, "snapshot", "export", id, "-o", fifo, "--root", from.root], { stdout: "ignore", stderr: "ignore" });
    const r = cli(["snapshot", "import", fifo, "--root", to.root]);
    expect(await writer.exited).toBe(0);
    expect(r.code).toBe(0);
    expect(held(to.root, id)).toEqual({ id, a: "alpha\n" });
    // perl-base's Fcntl sets O_NONBLOCK on the pipe before worksnap reads it; the writer starts late
    const setNonBlocking = `use Fcntl; fcntl(STDIN, F_SETFL, fcntl(STDIN, F_GETFL, 0) | O_NONBLOCK) or die; exec @ARGV`;
    const script = `(sleep 0.5; "$0" snapshot export "$1" -o - --root "$2" 2>/dev/null) | perl -e '${setNonBlocking}' -- "$0" snapshot import - --root "$3"`;
    const p = Bun.spawnSync(["bash", "-c", script, BINARY, id, from.root, again.root]);
    expect(p.stderr.toString()).toBe("");
    expect(p.exitCode).toBe(0);
    expect(held(again.root, id)).toEqual({ id, a: "alpha\n" });
  });

  test("a directory, or a stream that is not a bundle, is refused and nothing is stored", async () => {
    await using to = await tmpRepo();
    await using dir = tmpDir("ws-import-stream-");
    mkdirSync(join(dir.path, "sub"));
    const d = cli(["snapshot", "import", join(dir.path, "sub"), "--root", to.root]);
    expect(d.code).toBe(1);
    expect(d.stderr).toBe(`worksnap: INVALID_ARGUMENT: ${join(dir.path, "sub")} is a directory\n`);
    writeFileSync(join(dir.path, "junk"), "not a tar archive at all\n".repeat(100));
    for (const stdin of ["", "not a tar archive at all\n".repeat(100)]) {
      const r = cli(["snapshot", "import", "-", "--root", to.root], { stdin });
      expect(r.code).toBe(1);
      expect(r.stderr).toMatch(/^worksnap: INVALID_ARGUMENT: bundle refused at entry #0: .*; nothing was imported\n$/);
    }
    expect(cli(["snapshot", "log", "--root", to.root]).stdout).toBe("");
  });
});
