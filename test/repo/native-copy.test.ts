/**
 * The compiled executable's native module where the temporary directory may
 * not hold executable code (mounted noexec): loaded from a copy in the
 * user's own directories, else left off with the reason, and the answers the
 * same either way. Mounting needs root on Linux; the module needs a build
 * that has it.
 */
import { afterAll, beforeAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, readdirSync, rmSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { cli } from "../helpers/binary";
import { tmpDir, tmpRepo } from "../helpers/tmp-repo";

const canMount = process.platform === "linux" && process.getuid?.() === 0;
const built = cli(["--version"]).stdout.includes("native: on");

describe.skipIf(!canMount || !built)("the native module beside a noexec temporary directory", () => {
  let noexec = "";
  beforeAll(() => {
    noexec = mkdtempSync(join(tmpdir(), "ws-noexec-"));
    expect(Bun.spawnSync(["mount", "-t", "tmpfs", "-o", "noexec,size=16m", "tmpfs", noexec]).exitCode).toBe(0);
  });
  afterAll(() => {
    Bun.spawnSync(["umount", "-l", noexec]);
    rmSync(noexec, { recursive: true, force: true });
  });

  test("regression (native off on hardened machines): it loads from a copy under ~/.cache, and captures the same snapshot", async () => {
    await using repo = await tmpRepo();
    for (let i = 0; i < 40; i++) repo.write(`src/f${i}.ts`, `export const v${i} = ${i};\n`);
    repo.commit();
    repo.write("src/f3.ts", "changed\n");
    await using home = tmpDir("ws-home-");
    const env = { TMPDIR: noexec, HOME: home.path, XDG_RUNTIME_DIR: "" };
    const version = cli(["--version"], { env }).stdout;
    expect(version).toContain(`native: on (`);
    expect(version).toContain(`loaded from ${join(home.path, ".cache", "worksnap")}: the runtime's own copy would not load`);
    const copies = readdirSync(join(home.path, ".cache", "worksnap"));
    expect(copies).toHaveLength(1);
    expect(copies[0]).toMatch(/^worksnap-[0-9a-f]{16}\.node$/);
    expect(statSync(join(home.path, ".cache", "worksnap")).mode & 0o777).toBe(0o700);
    // the copy is reused, not written again, by the next process
    const before = statSync(join(home.path, ".cache", "worksnap", copies[0]!)).mtimeMs;
    const withCopy = cli(["snapshot", "create", "--root", repo.root], { env });
    expect(withCopy.code).toBe(0);
    expect(statSync(join(home.path, ".cache", "worksnap", copies[0]!)).mtimeMs).toBe(before);
    const plain = cli(["snapshot", "create", "--root", repo.root], { env: { WORKSNAP_NATIVE: "0" } });
    expect(withCopy.stdout).toBe(plain.stdout);
    // XDG_RUNTIME_DIR comes first when there is one
    await using runtime = tmpDir("ws-runtime-");
    expect(cli(["--version"], { env: { ...env, XDG_RUNTIME_DIR: runtime.path } }).stdout).toContain(`loaded from ${join(runtime.path, "worksnap")}`);
  });

  test("with every directory of the user's noexec too, the module is off, says why, and the answers are the same", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", "a\n");
    repo.commit();
    const home = join(noexec, "home");
    mkdirSync(home, { recursive: true });
    const env = { TMPDIR: noexec, HOME: home, XDG_RUNTIME_DIR: "" };
    const version = cli(["--version"], { env }).stdout;
    expect(version).toMatch(/native: off \(.*failed to map segment.*; a copy failed too \(.*\.cache\/worksnap: /);
    const off = cli(["snapshot", "create", "--root", repo.root], { env });
    expect(off.code).toBe(0);
    expect(off.stdout).toBe(cli(["snapshot", "create", "--root", repo.root]).stdout);
  });
});
