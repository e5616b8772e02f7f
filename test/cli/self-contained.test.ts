/**
 * The compiled executable carries everything it runs: its workers (hashing, the grep index's build), the
 * one-shot write's detached hand-off and the native module are inside it, never looked up in the source tree
 * it was built from. Each command runs here in a mount namespace where that tree's `src/`, `build/` and
 * `node_modules/` are hidden (empty tmpfs mounts), as on any machine it is copied to (regression guard: a
 * CommonJS bundle fixes `import.meta.url` at build time to the build machine's source path, which a worker
 * entry or the hand-off must not use). Root on Linux only, for the namespace.
 */
import { describe, expect, test } from "bun:test";
import { readdirSync } from "node:fs";
import { join } from "node:path";
import { POOL_PREFIX } from "../../src/repo/tmp-reserve";
import { BINARY, cli } from "../helpers/binary";
import { tmpRepo, type TmpRepo } from "../helpers/tmp-repo";

const CHECKOUT = join(import.meta.dir, "..", "..");
const canHide = process.platform === "linux" && process.getuid?.() === 0 && Bun.which("unshare") !== null;

/** The command line that runs the executable with `args` in a mount namespace where the checkout's sources are hidden. */
function hiddenCommand(args: string[]): string[] {
  const script = 'set -e; for d in src build node_modules; do mount -t tmpfs tmpfs "$1/$d"; done; [ -z "$(ls -A "$1/src")" ]; shift; exec "$@"';
  return ["unshare", "-m", "--propagation", "private", "sh", "-c", script, "sh", CHECKOUT, BINARY, ...args];
}

/** The executable run with the checkout's sources hidden; `env` added to this process's environment. */
function hidden(args: string[], env: Record<string, string> = {}, stdin?: string): { code: number; stdout: string; stderr: string } {
  const r = Bun.spawnSync(hiddenCommand(args), {
    env: { ...process.env, ...env },
    stdin: stdin === undefined ? "ignore" : Buffer.from(stdin),
  });
  return { code: r.exitCode, stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** 2,100 files (past the count where the TypeScript path starts its hash workers), `changed` of them modified. */
function seed(repo: TmpRepo, changed: number): void {
  for (let i = 0; i < 2100; i++) repo.write(`src/m${i % 40}/f${i}.ts`, `export const v${i} = ${i}; // handleRequest ${i % 7}\n`);
  repo.commit();
  for (let i = 0; i < changed; i++) repo.write(`src/m${i % 40}/f${i}.ts`, `export const v${i} = "changed";\n`);
}

describe.skipIf(!canHide)("the executable without the source tree it was built from", () => {
  test("the hash workers of a capture without the native module give the snapshot of an ordinary run", async () => {
    await using repo = await tmpRepo();
    seed(repo, 30);
    const r = hidden(["snapshot", "create", "--root", repo.root], { WORKSNAP_NATIVE: "0" });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    const id = r.stdout.trim();
    Bun.spawnSync(["rm", "-rf", join(repo.root, ".mcp")]);
    expect(cli(["snapshot", "create", "--root", repo.root]).stdout.trim()).toBe(id);
  });

  test("a one-shot write's detached hand-off runs: the replaced files are removed and spares made", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 40; i++) repo.write(`f${i}.txt`, `line ${i}\n`);
    repo.commit();
    for (let i = 0; i < 40; i++) repo.write(`f${i}.txt`, `line ${i}, changed\n`);
    const patch = repo.git("diff");
    repo.git("checkout", "--", ".");
    const r = hidden(["apply", "--root", repo.root], {}, patch);
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(repo.git("status", "--porcelain").split("\n").filter(Boolean).length).toBe(40);
    // only the spares' pool is left once the hand-off is done (a hand-off that never ran leaves the replaced files)
    const tmp = join(repo.root, ".mcp", "tmp");
    const deadline = Date.now() + 20_000;
    const done = () => {
      const left = readdirSync(tmp);
      return left.length > 0 && left.every((n) => n.startsWith(POOL_PREFIX));
    };
    while (!done() && Date.now() < deadline) await Bun.sleep(20);
    expect(readdirSync(tmp).filter((n) => !n.startsWith(POOL_PREFIX))).toEqual([]);
  });

  test("a server builds the grep index on its worker without the native module", async () => {
    await using repo = await tmpRepo();
    seed(repo, 0); // every blob of git's index can then be indexed from the work tree
    const init = { jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "t", version: "0" } } };
    const server = Bun.spawn(hiddenCommand(["serve", "--root", repo.root]), {
      env: { ...process.env, WORKSNAP_NATIVE: "0" },
      stdin: "pipe",
      stdout: "pipe",
      stderr: "pipe",
    });
    try {
      server.stdin.write(`${JSON.stringify(init)}\n${JSON.stringify({ jsonrpc: "2.0", method: "notifications/initialized" })}\n`);
      server.stdin.flush();
      const deadline = Date.now() + 60_000;
      const status = () => cli(["index", "status", "--root", repo.root, "--json"]).json();
      while (status().index_blobs_covered < 2100 && Date.now() < deadline) await Bun.sleep(100);
      expect(status()).toMatchObject({ index_blobs: 2100, index_blobs_covered: 2100 });
    } finally {
      server.stdin.end();
      await server.exited;
    }
    expect(server.exitCode).toBe(0);
  }, 90_000);
});
