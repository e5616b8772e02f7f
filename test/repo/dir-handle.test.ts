/**
 * Directories held open (src/repo/dir-handle.ts), on every backend this
 * machine has: the native module (openat2 and the *at calls), /proc/self/fd
 * paths (no native module), and checked absolute paths (neither). The same
 * operations give the same results; a symlink on the way is never followed.
 */
import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, lstatSync, mkdirSync, readFileSync, readlinkSync, renameSync, statSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { createHash } from "node:crypto";
import { join } from "node:path";
import { knowsSha256, sha256Of } from "../../src/core/content-hash";
import { CREATE_OPEN, configureDirHandles, type DirBackend, TreeHandles } from "../../src/repo/dir-handle";
import { nativeModule } from "../../src/repo/native";
import { tmpDir } from "../helpers/tmp-repo";

const BACKENDS: DirBackend[] = [...(nativeModule() ? (["native"] as const) : []), ...(process.platform === "linux" ? (["proc"] as const) : []), "paths"];

afterEach(() => configureDirHandles({ backend: null }));

function tree(root: string): TreeHandles {
  return TreeHandles.open(root);
}

for (const backend of BACKENDS) {
  describe(`dir handles (${backend})`, () => {
    test("readFile: the bytes to the end and the opened file's stat; a FIFO, a directory or an empty file gives no bytes without waiting; a missing name or a symlink is an error with its code", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      const big = Buffer.alloc(300_001, "x");
      writeFileSync(join(d.path, "big"), big);
      writeFileSync(join(d.path, "empty"), "");
      mkdirSync(join(d.path, "sub"));
      symlinkSync("big", join(d.path, "link"));
      Bun.spawnSync(["mkfifo", join(d.path, "fifo")]);
      const t = tree(d.path);
      try {
        const root = t.dir("")!;
        const read = root.readFile("big");
        expect(Buffer.from(read.bytes).equals(big)).toBe(true);
        expect([read.stat.isFile(), read.stat.size, read.stat.ino]).toEqual([true, big.length, statSync(join(d.path, "big")).ino]);
        expect(read.stat.mtimeMs).toBe(lstatSync(join(d.path, "big")).mtimeMs);
        expect(root.readFile("empty").bytes.length).toBe(0);
        const fifo = root.readFile("fifo");
        expect([fifo.bytes.length, fifo.stat.isFile()]).toEqual([0, false]);
        const dir = root.readFile("sub");
        expect([dir.bytes.length, dir.stat.isDirectory()]).toEqual([0, true]);
        expect(() => root.readFile("missing")).toThrow(expect.objectContaining({ code: "ENOENT", syscall: "open" }));
        expect(() => root.readFile("link")).toThrow(expect.objectContaining({ code: "ELOOP" }));
      } finally {
        t.close();
      }
    });

    test("readEntries: each entry as lstat and readFile give it, for a few entries and for many (the native module's one call), in any mix of kinds", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      mkdirSync(join(d.path, "sub"));
      const names: string[] = [];
      for (let k = 0; k < 30; k++) {
        writeFileSync(join(d.path, k % 2 ? `sub/f${k}` : `f${k}-é`), Buffer.alloc(k * 997, String.fromCharCode(97 + (k % 26))));
        names.push(k % 2 ? `sub/f${k}` : `f${k}-é`);
      }
      writeFileSync(join(d.path, "big"), Buffer.alloc(300_001, "y"));
      symlinkSync("big", join(d.path, "link"));
      Bun.spawnSync(["mkfifo", join(d.path, "fifo")]);
      names.push("big", "link", "fifo", "sub", "missing", "sub/missing", "x".repeat(300));
      const t = tree(d.path);
      try {
        const items = names.map((n) => (n.startsWith("sub/") ? { dir: t.dir("sub")!, name: n.slice(4) } : { dir: t.dir("")!, name: n }));
        const one = (dir: (typeof items)[number]["dir"], name: string) => {
          let stat;
          try {
            stat = dir.lstat(name);
          } catch (err) {
            return { error: (err as NodeJS.ErrnoException).code };
          }
          if (!stat?.isFile()) return { stat: stat && [stat.ino, stat.mode, stat.size], read: null };
          const r = dir.readFile(name);
          return { stat: [stat.ino, stat.mode, stat.size], read: { bytes: Buffer.from(r.bytes).toString("base64"), stat: [r.stat.ino, r.stat.mode, r.stat.size, r.stat.mtimeMs] } };
        };
        const shown = (e: ReturnType<TreeHandles["readEntries"]>[number]) => {
          if (e instanceof Error) return { error: (e as NodeJS.ErrnoException).code };
          const read = e.read instanceof Error ? { error: (e.read as NodeJS.ErrnoException).code } : e.read && { bytes: Buffer.from(e.read.bytes).toString("base64"), stat: [e.read.stat.ino, e.read.stat.mode, e.read.stat.size, e.read.stat.mtimeMs] };
          return { stat: e.stat && [e.stat.ino, e.stat.mode, e.stat.size], read };
        };
        const expected = items.map(({ dir, name }) => one(dir, name));
        // the truths behind them, on every backend
        expect(expected[names.indexOf("big")]).toMatchObject({ read: { bytes: Buffer.alloc(300_001, "y").toString("base64") } });
        expect(expected[names.indexOf("link")]!.read).toBeNull();
        expect(expected[names.indexOf("fifo")]!.read).toBeNull();
        expect(expected[names.indexOf("missing")]).toEqual({ stat: null, read: null });
        expect(expected[names.indexOf("x".repeat(300))]).toEqual({ error: "ENAMETOOLONG" });
        for (const count of [items.length, 5]) expect(t.readEntries(items.slice(0, count)).map(shown)).toEqual(expected.slice(0, count));
      } finally {
        t.close();
      }
    });

    test("readEntries: the files read in the native module's one call come with their SHA-256, hashed where they were read", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      const sizes = [0, 1, 55, 56, 64, 4097, 70_000, 300_001, ...Array.from({ length: 24 }, (_, k) => 900 + k * 4_111)];
      sizes.forEach((size, k) => writeFileSync(join(d.path, `f${k}`), Buffer.alloc(size, String.fromCharCode(65 + (k % 50)))));
      const t = tree(d.path);
      try {
        const read = t.readEntries(sizes.map((_, k) => ({ dir: t.dir("")!, name: `f${k}` })));
        read.forEach((e, k) => {
          if (e instanceof Error || !e.read || e.read instanceof Error) throw new Error(`f${k} not read`);
          const expected = createHash("sha256").update(Buffer.alloc(sizes[k]!, String.fromCharCode(65 + (k % 50)))).digest("hex");
          // on the other backends the digest is computed when asked; the native one knows it already
          expect(knowsSha256(e.read.bytes)).toBe(backend === "native");
          expect(sha256Of(e.read.bytes)).toBe(expected);
        });
      } finally {
        t.close();
      }
    });

    test("readEntries while a file is swapped for a symlink to a secret outside the root, and back, in a loop: never the secret's bytes", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      mkdirSync(join(d.path, "root"));
      writeFileSync(join(d.path, "secret"), "SECRET\n");
      const names: string[] = [];
      for (let k = 0; k < 20; k++) {
        writeFileSync(join(d.path, "root", `f${k}`), `file ${k}\n`);
        names.push(`f${k}`);
      }
      writeFileSync(join(d.path, "root", "victim"), "safe\n");
      names.push("victim");
      // the adversary: victim becomes a symlink to ../secret and a regular file again, as fast as it can
      const swapper = Bun.spawn(["bash", "-c", "cd \"$0\" && while :; do ln -s ../secret l && mv -T l victim; printf 'safe\\n' > f && mv -T f victim; done", join(d.path, "root")], { stdout: "ignore", stderr: "ignore" });
      const t = tree(join(d.path, "root"));
      const seen = { file: 0, symlink: 0, changed: 0 };
      try {
        const root = t.dir("")!;
        const items = names.map((name) => ({ dir: root, name }));
        const deadline = Date.now() + 1500;
        while (Date.now() < deadline) {
          const entries = t.readEntries(items);
          for (let k = 0; k < 20; k++) expect(Buffer.from((entries[k] as { read: { bytes: Uint8Array } }).read.bytes).toString()).toBe(`file ${k}\n`);
          const v = entries[20]!;
          if (v instanceof Error) throw v;
          if (v.stat === null) continue; // between the unlink and the rename of a mv: absent
          if (v.stat.isSymbolicLink()) {
            expect(v.read).toBeNull();
            seen.symlink++;
          } else if (v.read instanceof Error) {
            // a regular file by lstat, a symlink by the time it was opened: O_NOFOLLOW refused it
            expect((v.read as NodeJS.ErrnoException).code).toBeOneOf(["ELOOP", "ENOENT"]);
            seen.changed++;
          } else {
            expect(Buffer.from(v.read!.bytes).toString()).toBe("safe\n");
            seen.file++;
          }
        }
      } finally {
        swapper.kill();
        await swapper.exited;
        t.close();
      }
      expect(seen.file + seen.symlink).toBeGreaterThan(0);
    });

    test.skipIf(process.platform !== "linux")("readFile reads to the end of a file that holds more than its stat said (a /proc file says 0 bytes)", () => {
      configureDirHandles({ backend });
      const t = tree(`/proc/${process.pid}`);
      try {
        const text = Buffer.from(t.dir("")!.readFile("status").bytes).toString("utf8");
        expect(text).toStartWith("Name:");
        expect(text).toContain(`\nPid:\t${process.pid}\n`);
        expect(text.endsWith("\n")).toBe(true);
      } finally {
        t.close();
      }
    });

    test("open beneath the root, read, write, rename and remove relative to held directories", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      mkdirSync(join(d.path, "a", "b"), { recursive: true });
      writeFileSync(join(d.path, "a", "b", "f.txt"), "hello\n");
      const t = tree(d.path);
      try {
        expect(t.backend).toBe(backend);
        const b = t.dir("a/b")!;
        expect(b).not.toBeNull();
        expect(t.dir("a/missing")).toBeNull();
        const st = b.lstat("f.txt")!;
        expect(st.isFile()).toBe(true);
        expect(st.size).toBe(6);
        expect(b.lstat("nope")).toBeNull();
        expect(Buffer.from(b.readFile("f.txt").bytes).toString()).toBe("hello\n");

        const fd = b.openFile("new.txt", CREATE_OPEN, 0o600);
        writeSync(fd, "new\n");
        closeSync(fd);
        expect(readFileSync(join(d.path, "a/b/new.txt"), "utf8")).toBe("new\n");
        expect(() => b.openFile("new.txt", CREATE_OPEN, 0o600)).toThrow(/EEXIST/);

        const made: string[] = [];
        const deep = t.ensureDir("a/x/y/z", made);
        expect(made).toEqual(["a/x", "a/x/y", "a/x/y/z"]);
        b.rename("new.txt", deep, "moved.txt");
        expect(readFileSync(join(d.path, "a/x/y/z/moved.txt"), "utf8")).toBe("new\n");
        deep.symlink(new TextEncoder().encode("moved.txt"), "link");
        expect(readlinkSync(join(d.path, "a/x/y/z/link"))).toBe("moved.txt");
        expect(Buffer.from(deep.readlink("link")).toString()).toBe("moved.txt");
        expect(deep.lstat("link")!.isSymbolicLink()).toBe(true);
        expect(() => deep.readFile("link")).toThrow(/ELOOP/); // never followed
        deep.unlink("link");
        deep.unlink("moved.txt");
        expect(deep.list()).toEqual([]);
        t.dir("a/x/y")!.rmdir("z");
        expect(existsSync(join(d.path, "a/x/y/z"))).toBe(false);
        expect(b.list().sort()).toEqual(["f.txt"]);
        b.fsync();
      } finally {
        t.close();
      }
    });

    test("a symlink on the way is refused (REPO_CHANGED), wherever it points; a file on the way is just not a directory", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      await using outside = tmpDir("ws-dirh-out-");
      mkdirSync(join(d.path, "real"));
      mkdirSync(join(d.path, ".git"));
      symlinkSync(outside.path, join(d.path, "out"));
      symlinkSync(".git", join(d.path, "git"));
      symlinkSync("real", join(d.path, "inside"));
      writeFileSync(join(d.path, "file"), "x");
      const t = tree(d.path);
      try {
        for (const rel of ["out", "out/sub", "git", "git/objects", "inside", "real/../out"]) {
          if (rel.includes("..")) continue; // callers never pass ".." (RepoPath refuses it)
          let err: any = null;
          try {
            t.dir(rel);
          } catch (e) {
            err = e;
          }
          expect({ rel, code: err?.code, reason: err?.details?.reason }).toEqual({ rel, code: "REPO_CHANGED", reason: "symlink_on_path" });
        }
        expect(t.dir("file")).toBeNull();
        expect(t.dir("file/below")).toBeNull();
        expect(() => t.ensureDir("out/new")).toThrow(/symbolic link/);
        expect(existsSync(join(outside.path, "new"))).toBe(false);
      } finally {
        t.close();
      }
    });

    test("a directory swapped for a symlink after it was opened: the operations still act on the held directory", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      await using outside = tmpDir("ws-dirh-out-");
      mkdirSync(join(d.path, "d"));
      const t = tree(d.path);
      try {
        const held = t.dir("d")!;
        renameSync(join(d.path, "d"), join(d.path, "elsewhere"));
        symlinkSync(outside.path, join(d.path, "d"));
        if (backend === "paths") {
          // The checked-path fallback notices the swap and refuses, before it writes.
          expect(() => held.mkdir("x")).toThrow(/symbolic link|changed/);
        } else {
          held.mkdir("x");
          const fd = held.openFile("f", CREATE_OPEN, 0o644);
          closeSync(fd);
          expect(statSync(join(d.path, "elsewhere", "x")).isDirectory()).toBe(true);
          expect(existsSync(join(d.path, "elsewhere", "f"))).toBe(true);
        }
        expect(readFileSyncList(outside.path)).toEqual([]);
      } finally {
        t.close();
      }
    });

    test("exchange swaps two names in one step where the native module is loaded; elsewhere it declines and nothing changes", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      writeFileSync(join(d.path, "a"), "A");
      mkdirSync(join(d.path, "sub"));
      writeFileSync(join(d.path, "sub", "b"), "B");
      const t = tree(d.path);
      try {
        const [ia, ib] = [lstatSync(join(d.path, "a")).ino, lstatSync(join(d.path, "sub/b")).ino];
        const done = t.root.exchange("a", t.dir("sub")!, "b");
        expect(done).toBe(backend === "native");
        if (done) {
          expect(readFileSync(join(d.path, "a"), "utf8")).toBe("B");
          expect(readFileSync(join(d.path, "sub/b"), "utf8")).toBe("A");
          expect([lstatSync(join(d.path, "a")).ino, lstatSync(join(d.path, "sub/b")).ino]).toEqual([ib, ia]);
        } else expect(readFileSync(join(d.path, "a"), "utf8")).toBe("A");
        // a missing side declines without changing anything, and exchanges still work afterwards
        expect(t.root.exchange("missing", t.root, "a")).toBe(false);
        if (backend === "native") expect(t.root.exchange("a", t.dir("sub")!, "b")).toBe(true);
      } finally {
        t.close();
      }
    });

    test("errors name the repo-relative path, never an absolute or /proc path", async () => {
      configureDirHandles({ backend });
      await using d = tmpDir("ws-dirh-");
      mkdirSync(join(d.path, "a"));
      const t = tree(d.path);
      try {
        let err: any = null;
        try {
          t.dir("a")!.unlink("missing.txt");
        } catch (e) {
          err = e;
        }
        expect(err.code).toBe("ENOENT");
        expect(err.message).toBe("ENOENT: unlink a/missing.txt");
        expect(err.message).not.toContain(d.path);
        expect(err.message).not.toContain("/proc/");
      } finally {
        t.close();
      }
    });
  });
}

function readFileSyncList(dir: string): string[] {
  return require("node:fs").readdirSync(dir);
}
