/**
 * The umask is read without being changed. `process.umask()` reads it by setting it to 0 and back, and a directory
 * the I/O threads made in between got 0777 (1,886 of 4,000 in the scenario below, with the write path's way of
 * asking once per file).
 */
import { describe, expect, test } from "bun:test";
import { mkdirSync, statSync } from "node:fs";
import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import { processUmask } from "../../src/repo/umask";
import { tmpDir } from "../helpers/tmp-repo";

describe("processUmask", () => {
  test("the process's umask, under each umask it is started with", () => {
    for (const umask of ["022", "077", "027", "002"]) {
      const r = Bun.spawnSync(["bash", "-c", `umask ${umask} && exec "$0" -e "$1"`, process.execPath, `console.log((await import(${JSON.stringify(join(import.meta.dir, "../../src/repo/umask.ts"))})).processUmask().toString(8))`], { stdout: "pipe", stderr: "pipe" });
      expect([umask, r.stdout.toString().trim().padStart(3, "0")]).toEqual([umask, umask]);
    }
  });

  test("read over and over while the I/O threads make directories: every directory has the umask applied", async () => {
    await using dir = tmpDir("ws-umask-");
    const umask = processUmask();
    let made = 0;
    for (let round = 0; round < 20; round++) {
      const base = join(dir.path, `r${round}`);
      mkdirSync(base);
      const pending: Promise<unknown>[] = [];
      for (let i = 0; i < 200; i++) pending.push(mkdir(join(base, `d${i}`), 0o777));
      const until = Date.now() + 20;
      while (Date.now() < until) processUmask();
      await Promise.all(pending);
      for (let i = 0; i < 200; i++, made++) expect(statSync(join(base, `d${i}`)).mode & 0o777).toBe(0o777 & ~umask);
    }
    expect(made).toBe(4000);
  });
});
