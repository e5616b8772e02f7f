/**
 * grep's native reads (src/native/scan_job.c, search.c): the SIMD substring
 * search at every offset around its block edges, the binary rule, the
 * line-level test of required literals, large files streamed through the
 * literals, hashing, remembered stamps and what a path that is not a regular
 * file gives. Each case is checked against the plain answer in TypeScript.
 */
import { afterAll, describe, expect, test } from "bun:test";
import { mkdirSync, mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { joinPaths, nativeModule, waitReady, type NativeModule } from "../../src/repo/native";

const m = nativeModule();

interface Scan {
  kind: number;
  digest: string | null;
  same: boolean;
  errno: number;
  bytes: Buffer | null;
}

const BINARY = 0;
const SKIP = 1;
const BYTES = 2;
const LARGE = 4;
const ERROR = 5;

async function scan(
  mod: NativeModule,
  root: string,
  paths: string[],
  opts: { literals?: string[] | null; required?: string[][]; limit?: number; hash?: boolean; keep?: boolean | 2; known?: Float64Array; folded?: number; sniff?: number } = {},
): Promise<Scan[]> {
  const n = paths.length;
  const enc = (s: string) => new Uint8Array(Buffer.from(s));
  const literals = opts.literals === null ? null : (opts.literals ?? []).map(enc);
  const required = (opts.required ?? []).map((set) => set.map(enc));
  const needleBytes = [...(literals ?? []), ...required.flat()].reduce((s, l) => s + l.length, 0);
  const known = opts.known ?? new Float64Array(5 * n).fill(Number.NaN);
  const job = mod.scanStart(joinPaths(paths), n, new Uint8Array(n).fill(opts.hash ? 1 : 0), known, opts.limit ?? 1 << 20, opts.sniff ?? 8000, 2000, literals, required, needleBytes, opts.keep ?? true, root, opts.folded ?? 0);
  try {
    await waitReady(mod, job, n);
    const [records, files] = mod.scanCollect(job, 0, n);
    const L = mod.layout;
    return paths.map((_, i) => {
      const at = i * L.SCAN_RECORD;
      const kind = records[at + L.SR_KIND]!;
      const file = files[records.readDoubleLE(at + L.SR_OFFSET)];
      return {
        kind,
        digest: records[at + L.SR_DIGEST] ? records.toString("hex", at + L.SR_SHA256, at + L.SR_SHA256 + 32) : null,
        same: records[at + L.SR_SAME] === 1,
        errno: records.readInt32LE(at + L.SR_ERRNO),
        bytes: kind === BYTES && (opts.keep ?? true) !== false ? (file ?? null) : null,
      };
    });
  } finally {
    mod.release(job);
  }
}

const sha256 = (b: Uint8Array | string) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

describe.skipIf(m === null)("native scan job", () => {
  const mod = m as NativeModule;
  const root = mkdtempSync(join(tmpdir(), "ws-native-scan-"));
  afterAll(() => rmSync(root, { recursive: true, force: true }));

  test("a literal is found at every offset around the SIMD blocks, for needles of 1 to 40 bytes", async () => {
    const paths: string[] = [];
    const expected: boolean[] = [];
    const needles = ["q", "qz", "qzx", "quartz-needle-16b", "a-needle-of-thirty-three-bytes-xy", "a forty byte needle, longer than a block"];
    for (const needle of needles) {
      for (const size of [needle.length, needle.length + 1, 31, 32, 33, 63, 64, 65, 100]) {
        if (size < needle.length) continue;
        for (let at = 0; at + needle.length <= size; at++) {
          const name = `n${paths.length}.txt`;
          const text = "a".repeat(at) + needle + "a".repeat(size - at - needle.length);
          writeFileSync(join(root, name), text);
          paths.push(name);
          expected.push(true);
        }
        // the needle's first and last bytes in place, a middle byte wrong: no match
        if (needle.length >= 3) {
          const name = `n${paths.length}.txt`;
          const broken = needle.slice(0, 1) + "#" + needle.slice(2);
          writeFileSync(join(root, name), "a".repeat(size - needle.length) + broken);
          paths.push(name);
          expected.push(false);
        }
      }
      const found = await scan(mod, root, paths, { literals: [needle] });
      for (let i = 0; i < paths.length; i++) expect({ path: paths[i], kind: found[i]!.kind }).toEqual({ path: paths[i], kind: expected[i] ? BYTES : SKIP });
      paths.length = 0;
      expected.length = 0;
    }
  });

  test("binary files by git's rule (a NUL in the first 8000 bytes); kept bytes and hashes as asked", async () => {
    writeFileSync(join(root, "bin.dat"), new Uint8Array([1, 2, 0, 3]));
    writeFileSync(join(root, "late-nul.txt"), `${"x".repeat(8000)}\0 needle`);
    writeFileSync(join(root, "text.txt"), "one needle here\n");
    writeFileSync(join(root, "other.txt"), "nothing\n");
    const r = await scan(mod, root, ["bin.dat", "late-nul.txt", "text.txt", "other.txt"], { literals: ["needle"], hash: true });
    expect(r.map((x) => x.kind)).toEqual([BINARY, BYTES, BYTES, SKIP]);
    expect(r[2]!.bytes?.toString()).toBe("one needle here\n");
    expect(r[2]!.digest).toBe(sha256("one needle here\n"));
    expect(r[3]!.digest).toBe(sha256("nothing\n"));
    expect(r[0]!.digest).toBeNull();
    // keep: false marks a file that may match, without its bytes or a hash (the caller reads it again)
    const marked = await scan(mod, root, ["text.txt"], { literals: ["needle"], hash: true, keep: false });
    expect(marked[0]!).toMatchObject({ kind: BYTES, digest: null, bytes: null });
  });

  test("required literals must share a line with a literal", async () => {
    writeFileSync(join(root, "same-line.txt"), "x\nfetchUser(user) here\ny\n");
    writeFileSync(join(root, "split.txt"), "fetchUser here\n(user on another line\n");
    writeFileSync(join(root, "last-line.txt"), "a\nb (user fetch");
    const r = await scan(mod, root, ["same-line.txt", "split.txt", "last-line.txt"], { literals: ["fetch"], required: [["(user"]] });
    expect(r.map((x) => x.kind)).toEqual([BYTES, SKIP, BYTES]);
  });

  test("a file over the limit is streamed through the literals, even one spanning two pieces", async () => {
    const MiB = 1 << 20;
    writeFileSync(join(root, "span.log"), `${"a".repeat(MiB - 3)}NEEDLE${"b\n".repeat(1000)}`);
    writeFileSync(join(root, "none.log"), "no match\n".repeat(300_000));
    writeFileSync(join(root, "big-bin.log"), Buffer.concat([Buffer.from([0]), Buffer.alloc(3 * MiB, 65)]));
    const r = await scan(mod, root, ["span.log", "none.log", "big-bin.log"], { literals: ["NEEDLE"], limit: 64 * 1024, hash: true });
    expect(r.map((x) => x.kind)).toEqual([LARGE, SKIP, BINARY]);
    expect(r[1]!.digest).toBe(sha256("no match\n".repeat(300_000)));
    // without literals a large file is left to the caller
    expect((await scan(mod, root, ["none.log"], { literals: null, limit: 64 * 1024 }))[0]!.kind).toBe(LARGE);
  });

  test("a remembered stamp skips the hash; gone paths and non-regular files are errors with errno", async () => {
    writeFileSync(join(root, "stamped.txt"), "stable\n");
    const st = statSync(join(root, "stamped.txt"));
    const known = new Float64Array([st.dev, st.ino, st.size, st.mtimeMs, st.ctimeMs]);
    const r = await scan(mod, root, ["stamped.txt"], { literals: ["zzz"], hash: true, known });
    expect(r[0]).toMatchObject({ kind: SKIP, same: true, digest: null });
    mkdirSync(join(root, "a-dir"), { recursive: true });
    Bun.spawnSync(["mkfifo", join(root, "a-fifo")]);
    Bun.spawnSync(["python3", "-c", `import socket; socket.socket(socket.AF_UNIX).bind(${JSON.stringify(join(root, "a-socket"))})`]);
    const bad = await scan(mod, root, ["missing.txt", "a-dir", "a-fifo", "a-socket"], { literals: ["x"] });
    expect(bad.map((x) => x.kind)).toEqual([ERROR, ERROR, ERROR, ERROR]);
    expect(bad[0]!.errno).toBe(2); // ENOENT
    expect(bad[1]!.errno).toBe(21); // EISDIR: the file is gone, a directory took its place
    expect(bad[2]!.errno).toBe(-1); // not a regular file: never read
    expect(bad[3]!.errno).toBe(-1); // a socket fails to open (ENXIO): not a regular file either
  });

  test.skipIf(process.platform !== "linux")("an export's read (kept whole, nothing to look for): bytes and hash as in the file, a file emptied or grown since its stat read as it is (a /proc file says 0 bytes)", async () => {
    writeFileSync(join(root, "whole.bin"), new Uint8Array(70_000).map((_, i) => i % 253));
    writeFileSync(join(root, "empty.txt"), "");
    const r = await scan(mod, root, ["whole.bin", "empty.txt"], { literals: null, hash: true, sniff: 0 });
    expect(r.map((x) => x.kind)).toEqual([BYTES, BYTES]);
    expect(Buffer.compare(r[0]!.bytes!, Buffer.from(new Uint8Array(70_000).map((_, i) => i % 253)))).toBe(0);
    expect([r[0]!.digest, r[1]!.bytes?.length, r[1]!.digest]).toEqual([sha256(new Uint8Array(70_000).map((_, i) => i % 253)), 0, sha256("")]);
    // a file holding more than its stat says is read to its end, not cut at the stat's size
    const proc = await scan(mod, `/proc/${process.pid}`, ["status"], { literals: null, hash: true, sniff: 0 });
    expect(statSync(`/proc/${process.pid}/status`).size).toBe(0);
    expect(proc[0]!.kind).toBe(BYTES);
    expect(proc[0]!.bytes!.toString()).toStartWith("Name:");
    expect(proc[0]!.digest).toBe(sha256(proc[0]!.bytes!));
  });

  test("countByte counts a byte at every offset and length", () => {
    for (let len = 0; len < 100; len++) {
      const b = new Uint8Array(len).map((_, i) => (i % 3 === 0 ? 10 : 65));
      const want = b.filter((x) => x === 10).length;
      expect(mod.countByte(b, 10, 0, len)).toBe(want);
      if (len > 5) expect(mod.countByte(b, 10, 2, len - 1)).toBe(b.subarray(2, len - 1).filter((x) => x === 10).length);
    }
  });

  test("keeping lines: only the lines that may hold a match come back, numbered, and the hash covers the whole file", async () => {
    // Line 2 holds the lead literal but not the required set; lines 3, 5 and 7 hold both (7 without a newline);
    // line 4 has the required string only. CRLF lines keep their CR.
    const text = "intro\nfetch only\nfetchUser(user)\r\nuser( alone\n(user then fetch\n\nlast fetch (user";
    writeFileSync(join(root, "lines.txt"), text);
    writeFileSync(join(root, "first.txt"), "fetch(user first\nno\n");
    const got = await scan(mod, root, ["lines.txt", "first.txt"], { literals: ["fetch"], required: [["(user"]], keep: 2, hash: true });
    const decode = (b: Buffer) => {
      const n = b.readUInt32LE(0);
      const numbers = Array.from({ length: n }, (_, k) => b.readUInt32LE(4 + 4 * k));
      return { numbers, text: b.subarray(4 + 4 * n).toString("latin1") };
    };
    expect(got.map((g) => g.kind)).toEqual([BYTES, BYTES]);
    expect(decode(got[0]!.bytes!)).toEqual({ numbers: [3, 5, 7], text: "fetchUser(user)\r\n(user then fetch\nlast fetch (user" });
    expect(decode(got[1]!.bytes!)).toEqual({ numbers: [1], text: "fetch(user first\n" });
    expect(got[0]!.digest).toBe(sha256(text));
    // without a required set, every line holding a literal
    const plain = await scan(mod, root, ["lines.txt"], { literals: ["(user"], keep: 2 });
    expect(decode(plain[0]!.bytes!)).toEqual({ numbers: [3, 5, 7], text: "fetchUser(user)\r\n(user then fetch\nlast fetch (user" });
    const alone = await scan(mod, root, ["lines.txt"], { literals: ["user("], keep: 2 });
    expect(decode(alone[0]!.bytes!)).toEqual({ numbers: [4], text: "user( alone\n" });
  });

  test("folded literals: ASCII letters match in either case at every offset around the SIMD blocks, other bytes only themselves", async () => {
    const flip = (t: string, k: number) => [...t].map((ch, i) => ((i + k) % 3 === 0 ? ch.toUpperCase() : ch)).join("");
    for (const needle of ["q", "qz", "a_b", "handlerequest", "k-needle-of-thirty-three-bytes-x", "a forty byte needle, longer than a block"]) {
      const paths: string[] = [];
      const expected: number[] = [];
      const add = (text: string, kind: number) => {
        const name = `f${paths.length}.txt`;
        writeFileSync(join(root, name), text);
        paths.push(name);
        expected.push(kind);
      };
      for (const size of [needle.length, 31, 32, 33, 63, 64, 65, 100]) {
        if (size < needle.length) continue;
        for (let at = 0; at + needle.length <= size; at++) add("#".repeat(at) + flip(needle, at) + "#".repeat(size - at - needle.length), BYTES);
        // a byte that only ORs to the needle's (not a letter's other case) does not match: "_" | 0x20 is DEL
        if (needle.includes("_")) add("#".repeat(size - needle.length) + needle.replace("_", "\x7f"), SKIP);
        if (needle.length >= 3) add("#".repeat(size - needle.length) + needle.slice(0, 1) + "@" + needle.slice(2), SKIP);
      }
      // the guard (here the Kelvin sign, given as a second literal, matched exactly) also makes a file a candidate
      add("\u212a alone", needle.startsWith("k") ? BYTES : SKIP);
      const literals = needle.startsWith("k") ? [needle, "\u212a"] : [needle];
      const found = await scan(mod, root, paths, { literals, folded: 1 });
      for (let i = 0; i < paths.length; i++) expect({ needle, path: paths[i], kind: found[i]!.kind }).toEqual({ needle, path: paths[i], kind: expected[i]! });
    }
    // kept lines under folding: the lines holding the string in any case
    writeFileSync(join(root, "fold-lines.txt"), "x\nHandleRequest()\nnone\nHANDLEREQUEST\n");
    const [r] = await scan(mod, root, ["fold-lines.txt"], { literals: ["handlerequest"], folded: 1, keep: 2 });
    const b = r!.bytes!;
    expect([b.readUInt32LE(0), b.readUInt32LE(4), b.readUInt32LE(8), b.subarray(12).toString()]).toEqual([2, 2, 4, "HandleRequest()\nHANDLEREQUEST\n"]);
  });
});
