import { describe, expect, test } from "bun:test";
import { closeSync, constants, mkdirSync, openSync, readSync, rmSync, symlinkSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { handToUnprivileged, mcpSession } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";
import { attempts, budgetMs } from "./scale";

/**
 * A tree salted with what an adversary or an unlucky user leaves in it:
 * FIFOs (with and without a writer), sockets, files the server may not read,
 * directories it may not open, names at the 255-byte limit, NFC and NFD
 * spellings of the same name, `.GIT`-like names, symlinks to all of these.
 * Each round builds a fresh random tree, then the server (as an unprivileged
 * user when the tests run as root) snapshots, lists, greps and exports it.
 * The promise: every call answers (none waits on a FIFO), none is INTERNAL,
 * every readable regular file is captured, every bad one is named in
 * `unreadable` and nothing else is, and no pipe loses a byte.
 */
class Rng {
  constructor(private s: number) {}
  next(): number {
    this.s = (this.s * 1103515245 + 12345) % 2 ** 31;
    return this.s / 2 ** 31;
  }
  pick<T>(xs: readonly T[]): T {
    return xs[Math.floor(this.next() * xs.length)] as T;
  }
}

const NAMES = ["café", "cafe\u0301", "Ünïcödé", "spaces in name", "tab\there", "日本語", "x".repeat(251), "é".repeat(125), "-dash", "#hash", "a:b"];
const FENCED = [".GIT", ".Git", "vendor/.git", "GIT~1", ".git."];

interface Planted {
  readable: string[];
  bad: string[];
  pipes: { path: string; fd: number; data: string }[];
}

function plant(root: string, rng: Rng, round: number): Planted {
  const p: Planted = { readable: [], bad: [], pipes: [] };
  const dirs = ["src", "src/deep", "docs", "locked-ok"];
  for (const d of dirs) mkdirSync(join(root, d), { recursive: true });
  for (let i = 0; i < 30; i++) {
    const dir = rng.pick(dirs);
    let base = rng.pick(NAMES);
    while (Buffer.byteLength(`${base}-${round}-${i}`) > 255) base = base.slice(1); // at the limit, never over it
    const name = `${base}-${round}-${i}`;
    const path = `${dir}/${name}`;
    const kind = rng.pick(["file", "file", "file", "fifo", "held-fifo", "socket", "unreadable", "link-to-fifo"] as const);
    const abs = join(root, path);
    if (kind === "file") {
      writeFileSync(abs, `needle ${i}\n`);
      p.readable.push(path);
    } else if (kind === "fifo" || kind === "held-fifo") {
      Bun.spawnSync(["mkfifo", abs]);
      if (kind === "held-fifo") {
        // a writer (and reader) holds it open with data waiting: a read would take it, a blocking open would not wait
        const fd = openSync(abs, constants.O_RDWR | constants.O_NONBLOCK);
        writeSync(fd, `pipe data ${i}\n`);
        p.pipes.push({ path, fd, data: `pipe data ${i}\n` });
      }
    } else if (kind === "socket") {
      Bun.spawnSync(["python3", "-c", `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(abs)})`]);
    } else if (kind === "unreadable") {
      writeFileSync(abs, `secret needle ${i}\n`);
      p.bad.push(path);
    } else {
      Bun.spawnSync(["mkfifo", `${abs}.target`]);
      symlinkSync(`${name}.target`, abs); // a symlink is captured as its link text, never followed
      p.readable.push(path);
    }
  }
  for (const f of FENCED) {
    mkdirSync(join(root, f), { recursive: true });
    writeFileSync(join(root, f, "config"), "needle fenced\n");
  }
  return p;
}

describe("torture: special files and hostile names", () => {
  test(
    "snapshot, list, grep and export answer, skip and name what they cannot read, and never wait on a FIFO",
    async () => {
      const rounds = attempts(2, 25);
      let failures = 0;
      for (let round = 0; round < rounds; round++) {
        await using repo = await tmpRepo({ git: round % 2 === 1 });
        repo.write("top.txt", "needle top\n");
        if (round % 2 === 1) repo.commit();
        const rng = new Rng(1000 + round);
        const planted = plant(repo.root, rng, round);
        handToUnprivileged(repo.root, planted.bad);
        try {
          await using s = await mcpSession(repo.root, [], { unprivileged: true });
          const snap = await s.call("snapshot_create", { paths: ["."] });
          const list = await s.call("snapshot_list", { mode: "snapshot", snapshot_id: snap.snapshot_id, recursive: true });
          const files = list.entries.filter((e: any) => e.type !== "dir").map((e: any) => e.path);
          expect(files.sort()).toEqual(["top.txt", ...planted.readable].sort());
          expect((snap.unreadable ?? []).sort()).toEqual([...planted.bad].sort().slice(0, 50));
          const grep = await s.call("snapshot_grep", { mode: "worktree", pattern: "needle", fixed_strings: true });
          expect(grep.matches.filter((m: any) => FENCED.some((f) => m.path.startsWith(`${f}/`)))).toEqual([]);
          expect(grep.matches.length).toBe(1 + planted.readable.filter((r) => !r.endsWith(".target") && !list.entries.find((e: any) => e.path === r && e.type === "symlink")).length);
          expect((grep.unreadable ?? []).sort()).toEqual([...planted.bad].sort());
          const exported = await s.call("snapshot_export", { mode: "worktree" });
          expect(exported.files).toBe(files.length);
          // no pipe lost a byte: nothing read from one
          for (const pipe of planted.pipes) {
            const buf = Buffer.alloc(64);
            expect(buf.subarray(0, readSync(pipe.fd, buf)).toString()).toBe(pipe.data);
          }
        } catch (e) {
          failures++;
          throw e;
        } finally {
          for (const { fd } of planted.pipes) closeSync(fd);
          rmSync(join(repo.root, ".mcp"), { recursive: true, force: true });
        }
      }
      expect(failures).toBe(0);
    },
    budgetMs(60_000, 900_000),
  );
});
