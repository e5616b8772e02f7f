import { describe, expect, test } from "bun:test";
import { mkdirSync, readFileSync, readlinkSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { concat } from "../../src/core/bytes";
import { BLOCK, putTarHeader, TarFormatError, TarReader, tarHeader, tarPadding, tarTrailer, type TarHeaderFields } from "../../src/repo/tar";
import { tmpDir } from "../helpers/tmp-repo";

const enc = new TextEncoder();

interface Item {
  path: string;
  type: "file" | "symlink";
  mode?: number;
  body: Uint8Array;
}

function archive(items: Item[]): Uint8Array {
  const parts: Uint8Array[] = [];
  for (const it of items) {
    const fields: TarHeaderFields =
      it.type === "symlink"
        ? { path: it.path, type: "symlink", mode: 0o777, size: 0, linkTarget: it.body }
        : { path: it.path, type: "file", mode: it.mode ?? 0o644, size: it.body.length };
    parts.push(tarHeader(fields));
    if (it.type === "file") parts.push(it.body, tarPadding(it.body.length));
  }
  parts.push(tarTrailer());
  return concat(parts);
}

async function readAll(bytes: Uint8Array): Promise<{ path: string; typeflag: string; mode: number; body: string; link: string }[]> {
  const r = new TarReader(new Blob([bytes]).stream());
  const out = [];
  for (;;) {
    const h = await r.next();
    if (!h) break;
    const chunks: Uint8Array[] = [];
    for await (const c of r.body(h.size)) chunks.push(c.slice());
    out.push({ path: h.path, typeflag: h.typeflag, mode: h.mode, body: Buffer.concat(chunks).toString(), link: Buffer.from(h.linkTarget).toString() });
  }
  return out;
}

const longDir = "d".repeat(60);
const longPath = `${longDir}/${"é".repeat(40)}/${"n".repeat(30)}.txt`; // > 100 bytes, multi-byte at the cut
const ITEMS: Item[] = [
  { path: "a.txt", type: "file", body: enc.encode("hello\n") },
  { path: "bin/run.sh", type: "file", mode: 0o755, body: enc.encode("#!/bin/sh\necho hi\n") },
  { path: "empty", type: "file", body: new Uint8Array(0) },
  { path: "exact", type: "file", body: new Uint8Array(BLOCK).fill(65) },
  { path: "link", type: "symlink", body: enc.encode("a.txt") },
  { path: "longlink", type: "symlink", body: enc.encode(`../${"t".repeat(120)}`) },
  { path: longPath, type: "file", body: enc.encode("deep\n") },
  { path: "ünï/ç.txt", type: "file", body: enc.encode("unicode\n") },
];

describe("tar writer", () => {
  test("headers carry no time, owner or host: mtime 0, uid/gid 0, empty uname/gname", () => {
    const h = tarHeader({ path: "a.txt", type: "file", mode: 0o644, size: 6 });
    expect(h.length).toBe(BLOCK);
    const field = (off: number, len: number) => Buffer.from(h.subarray(off, off + len)).toString("latin1");
    expect(field(100, 8)).toBe("0000644\0");
    expect(field(108, 8)).toBe("0000000\0");
    expect(field(116, 8)).toBe("0000000\0");
    expect(field(124, 12)).toBe("00000000006\0");
    expect(field(136, 12)).toBe("00000000000\0");
    expect(field(257, 8)).toBe("ustar\x0000");
    expect(h.subarray(265, 329).every((b) => b === 0)).toBe(true);
  });

  test("pax records only for names over 100 bytes", () => {
    expect(tarHeader({ path: "x".repeat(100), type: "file", mode: 0o644, size: 0 }).length).toBe(BLOCK);
    const long = tarHeader({ path: "x".repeat(101), type: "file", mode: 0o644, size: 0 });
    expect(long.length).toBe(3 * BLOCK);
    expect(String.fromCharCode(long[156] as number)).toBe("x");
    expect(Buffer.from(long.subarray(BLOCK, 2 * BLOCK)).toString().replace(/\0+$/, "")).toBe(`111 path=${"x".repeat(101)}\n`);
  });

  test("pax record length counts its own digits across a digit boundary", () => {
    // key "path": record = <len> + " path=" + value + "\n"; around 100 bytes the length gains a digit.
    const h = tarHeader({ path: "p".repeat(101), type: "file", mode: 0o644, size: 0 });
    const rec = Buffer.from(h.subarray(BLOCK, 2 * BLOCK)).toString().replace(/\0+$/, "");
    expect(Number(rec.split(" ")[0])).toBe(Buffer.byteLength(rec));
    for (let n = 101; n <= 120; n++) {
      const hh = tarHeader({ path: "z".repeat(n), type: "file", mode: 0o644, size: 0 });
      const r = Buffer.from(hh.subarray(BLOCK, 2 * BLOCK)).toString().replace(/\0+$/, "");
      expect(Number(r.split(" ")[0])).toBe(Buffer.byteLength(r));
    }
  });

  test("GNU tar extracts the archive exactly: names, long names, modes, symlinks", async () => {
    await using dir = tmpDir("ws-tar-");
    const file = join(dir.path, "x.tar");
    writeFileSync(file, archive(ITEMS));
    const listing = Bun.spawnSync(["tar", "-tvf", file], { env: { ...process.env, TZ: "UTC", LC_ALL: "C.UTF-8" } });
    expect(listing.exitCode).toBe(0);
    const lines = listing.stdout.toString().trim().split("\n");
    expect(lines[0]).toMatch(/^-rw-r--r-- 0\/0 +6 1970-01-01 00:00 a\.txt$/);
    expect(lines[1]).toMatch(/^-rwxr-xr-x 0\/0 +18 1970-01-01 00:00 bin\/run\.sh$/);
    const out = join(dir.path, "out");
    mkdirSync(out);
    const x = Bun.spawnSync(["tar", "-xf", file, "-C", out]);
    expect(x.stderr.toString()).toBe("");
    expect(x.exitCode).toBe(0);
    expect(readFileSync(join(out, longPath), "utf8")).toBe("deep\n");
    expect(readFileSync(join(out, "ünï/ç.txt"), "utf8")).toBe("unicode\n");
    expect(readlinkSync(join(out, "link"))).toBe("a.txt");
    expect(readlinkSync(join(out, "longlink"))).toBe(`../${"t".repeat(120)}`);
    expect(statSync(join(out, "bin/run.sh")).mode & 0o777).toBe(0o755);
    expect(readFileSync(join(out, "exact")).length).toBe(BLOCK);
  });

  test("a header written in place is the same block tarHeader makes, and is refused where a pax header is needed", () => {
    const fits: TarHeaderFields[] = [
      { path: "a.txt", type: "file", mode: 0o644, size: 6 },
      { path: "bin/run.sh", type: "file", mode: 0o755, size: 0o77777777777 },
      { path: "link", type: "symlink", mode: 0o777, size: 0, linkTarget: enc.encode("t".repeat(100)) },
      { path: "x".repeat(100), type: "file", mode: 0o644, size: 0 },
      { path: `${"x".repeat(98)}é`, type: "file", mode: 0o644, size: 1 }, // 100 bytes, the last two one character
      { path: "ünï/ç.txt", type: "file", mode: 0o644, size: 8 },
      { path: "lone\ud800surrogate", type: "file", mode: 0o644, size: 3 },
    ];
    // a block dirtied by an earlier, longer header: nothing of it may show through
    const block = new Uint8Array(BLOCK);
    for (const f of fits) {
      block.fill(0xee);
      expect(putTarHeader(block, f)).toBe(true);
      expect(Buffer.from(block).equals(Buffer.from(tarHeader(f)))).toBe(true);
    }
    const needPax: TarHeaderFields[] = [
      { path: "x".repeat(101), type: "file", mode: 0o644, size: 0 },
      { path: `${"x".repeat(99)}é`, type: "file", mode: 0o644, size: 0 }, // 101 bytes: the character does not fit
      { path: "big", type: "file", mode: 0o644, size: 0o77777777777 + 1 },
      { path: "longlink", type: "symlink", mode: 0o777, size: 0, linkTarget: enc.encode("t".repeat(101)) },
    ];
    for (const f of needPax) {
      expect(tarHeader(f).length).toBeGreaterThan(BLOCK);
      expect(putTarHeader(new Uint8Array(BLOCK), f)).toBe(false);
    }
    expect(putTarHeader(new Uint8Array(BLOCK + 1), fits[0] as TarHeaderFields)).toBe(false);
  });

  test("the same entries always give the same bytes", () => {
    expect(Bun.hash(archive(ITEMS))).toBe(Bun.hash(archive(ITEMS.map((i) => ({ ...i, body: i.body.slice() })))));
  });
});

describe("tar reader", () => {
  test("round-trips everything the writer writes", async () => {
    const got = await readAll(archive(ITEMS));
    expect(got.map((g) => g.path)).toEqual(ITEMS.map((i) => i.path));
    expect(got[1]).toMatchObject({ typeflag: "0", mode: 0o755, body: "#!/bin/sh\necho hi\n" });
    expect(got[5]).toMatchObject({ typeflag: "2", link: `../${"t".repeat(120)}` });
    expect(got[6]).toMatchObject({ path: longPath, body: "deep\n" });
  });

  test("a stream cut anywhere, its buffers reused as the import's are, reads the same: bodies whole where they lie in one chunk, else in pieces", async () => {
    const items: Item[] = [...ITEMS, { path: "big", type: "file", body: new Uint8Array(70_000).map((_, i) => i * 7) }, { path: "mid", type: "file", body: new Uint8Array(3000).fill(9) }, ...ITEMS.map((it) => ({ ...it, path: `z/${it.path}` }))];
    const bytes = archive(items);
    for (const cut of [1, 7, 511, 512, 513, 4096, 65_536, bytes.length]) {
      // three buffers taken in turn, each refilled once the reader has asked for two more chunks (bundleStream)
      const buffers = [new Uint8Array(cut), new Uint8Array(cut), new Uint8Array(cut)];
      let at = 0;
      let turn = 0;
      const stream = new ReadableStream<Uint8Array>(
        {
          pull(controller) {
            if (at >= bytes.length) return controller.close();
            const buf = buffers[turn++ % 3] as Uint8Array;
            const n = Math.min(cut, bytes.length - at);
            buf.set(bytes.subarray(at, at + n));
            at += n;
            controller.enqueue(buf.subarray(0, n));
          },
        },
        { highWaterMark: 0 },
      );
      const r = new TarReader(stream);
      const got: { path: string; body: string; link: string }[] = [];
      let whole = 0;
      for (;;) {
        const h = await r.next();
        if (!h) break;
        let body = r.wholeBody();
        if (body) {
          whole++;
          body = body.slice();
        } else {
          const chunks: Uint8Array[] = [];
          for await (const c of r.body(h.size)) chunks.push(c.slice());
          body = Buffer.concat(chunks);
        }
        got.push({ path: h.path, body: Buffer.from(body).toString("hex"), link: Buffer.from(h.linkTarget).toString() });
      }
      expect(await r.trailingDataIsZero()).toBe(true);
      const want = items.map((it) => ({ path: it.path, body: it.type === "file" ? Buffer.from(it.body).toString("hex") : "", link: it.type === "symlink" ? Buffer.from(it.body).toString() : "" }));
      expect([cut, got]).toEqual([cut, want]);
      if (cut === bytes.length) expect(whole).toBe(items.length);
      if (cut === 1) expect(whole).toBe(items.filter((it) => it.type === "symlink" || it.body.length === 0).length);
    }
  });

  test("reads an archive made by GNU tar (ustar prefix field)", async () => {
    await using dir = tmpDir("ws-tar-");
    const deep = `${"a".repeat(80)}/${"b".repeat(50)}`;
    mkdirSync(join(dir.path, "a".repeat(80)));
    writeFileSync(join(dir.path, deep), "x");
    const tarFile = join(dir.path, "g.tar");
    expect(Bun.spawnSync(["tar", "--format=ustar", "-cf", tarFile, "-C", dir.path, deep]).exitCode).toBe(0);
    const got = await readAll(new Uint8Array(readFileSync(tarFile)));
    expect(got.map((g) => g.path)).toEqual([deep]);
  });

  test("a flipped header byte fails the checksum, naming the entry", async () => {
    const bytes = archive(ITEMS);
    const second = BLOCK + BLOCK; // a.txt header + its one body block
    bytes[second + 3] = (bytes[second + 3] as number) ^ 1;
    const err = await readAll(bytes).catch((e) => e);
    expect(err).toBeInstanceOf(TarFormatError);
    expect((err as TarFormatError).entryIndex).toBe(1);
    expect(String(err.message)).toContain("checksum");
  });

  test("a truncated archive is an error, not a short listing", async () => {
    const bytes = archive(ITEMS);
    const err = await readAll(bytes.subarray(0, bytes.length - 2 * BLOCK)).catch((e) => e);
    expect(err).toBeInstanceOf(TarFormatError);
    const err2 = await readAll(bytes.subarray(0, BLOCK + 3)).catch((e) => e);
    expect(err2).toBeInstanceOf(TarFormatError);
  });
});
