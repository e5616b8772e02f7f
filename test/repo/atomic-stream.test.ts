import { describe, expect, test } from "bun:test";
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { AtomicFileWriter } from "../../src/repo/atomic-stream";
import { nativeModule } from "../../src/repo/native";
import { tmpDir } from "../helpers/tmp-repo";

const sha256 = (b: Uint8Array) => new Bun.CryptoHasher("sha256").update(b).digest("hex");

/** Pieces as a bundle has them: many small ones (headers, paddings, small files) and some large ones. */
function pieces(total: number): Uint8Array[] {
  const out: Uint8Array[] = [];
  let x = 7;
  let n = 0;
  for (let i = 0; n < total; i++) {
    x = (x * 1103515245 + 12345) >>> 0;
    const len = i % 97 === 0 ? 3 * 1024 * 1024 + (x % 4096) : i % 5 === 0 ? 70 * 1024 : x % 3000;
    const p = new Uint8Array(len);
    for (let k = 0; k < len; k += 251) p[k] = (x + k) & 0xff;
    out.push(p);
    n += len;
  }
  return out;
}

const ROOT = resolve(import.meta.dir, "../..");

describe("AtomicFileWriter", () => {
  test("many pieces, small and large, past the writer thread's queue bound, land whole and in order with their SHA-256", async () => {
    await using dir = tmpDir("ws-atomic-");
    const state = join(dir.path, ".mcp");
    const target = join(dir.path, "out.tar");
    const parts = pieces(80 * 1024 * 1024);
    const out = new AtomicFileWriter(state, target);
    for (const p of parts) {
      out.write(p);
      if (out.behind()) await out.caughtUp();
    }
    expect(existsSync(target)).toBe(false); // only commit makes it appear
    const digest = await out.commit();
    const written = readFileSync(target);
    expect(written.length).toBe(parts.reduce((n, p) => n + p.length, 0));
    expect(out.written).toBe(written.length);
    expect(Buffer.compare(written, Buffer.concat(parts))).toBe(0);
    expect(digest).toBe(sha256(written));
    expect(readdirSync(join(state, "tmp"))).toEqual([]);
  });

  test("bytes handed over with release land whole; with the writer thread their memory goes once copied (a whole buffer reads as empty after), a view of part of a buffer is left as it was", async () => {
    await using dir = tmpDir("ws-atomic-");
    const state = join(dir.path, ".mcp");
    const target = join(dir.path, "out.tar");
    const parts = pieces(12 * 1024 * 1024);
    const shared = new Uint8Array(8192).fill(0x5a);
    const view = shared.subarray(0, 4096);
    const want = Buffer.concat(parts.flatMap((p) => [Buffer.from(p), Buffer.from(view)]));
    const sizes = parts.map((p) => p.byteLength);
    const out = new AtomicFileWriter(state, target);
    for (const p of parts) {
      out.write(p, true);
      out.write(view, true);
      if (out.behind()) await out.caughtUp();
    }
    const digest = await out.commit();
    const written = readFileSync(target);
    expect(Buffer.compare(written, want)).toBe(0);
    expect(digest).toBe(sha256(written));
    // the pieces were copied before their memory went (native); without the module they are left as they were
    const native = nativeModule() !== null;
    expect(parts.map((p) => p.byteLength)).toEqual(native ? sizes.map(() => 0) : sizes);
    expect([view.byteLength, shared.byteLength, view[4095]]).toEqual([4096, 8192, 0x5a]);
  });

  test("pieces made in the writer's scratch memory land as they were filled, however many outlive a gathering (no region used again before it was copied)", async () => {
    await using dir = tmpDir("ws-atomic-");
    const state = join(dir.path, ".mcp");
    const target = join(dir.path, "out.tar");
    const out = new AtomicFileWriter(state, target);
    const want: Uint8Array[] = [];
    const big = pieces(6 * 1024 * 1024);
    for (let i = 0; i < 3000; i++) {
      // 3,000 blocks are 1.5 MB: the scratch memory (256 KiB) is used again several times over, in the first
      // half with nothing large written between (only what the writer gathers is copied then)
      const block = out.scratch(512);
      block.fill(i & 0xff);
      block[0] = i >> 8;
      want.push(block.slice());
      out.write(block);
      const p = i >= 1500 && i % 50 === 0 ? big[(i / 50) % big.length] : new Uint8Array(i % 700).fill(0x33);
      if (p) {
        want.push(p.slice());
        out.write(p);
      }
      if (out.behind()) await out.caughtUp();
    }
    const digest = await out.commit();
    const written = readFileSync(target);
    expect(Buffer.compare(written, Buffer.concat(want))).toBe(0);
    expect(digest).toBe(sha256(written));
    expect(() => new AtomicFileWriter(state, join(dir.path, "other.tar")).scratch(256 * 1024 + 1)).toThrow(RangeError);
  });

  test("abort leaves neither the target nor a temp file, with writes still queued", async () => {
    await using dir = tmpDir("ws-atomic-");
    const state = join(dir.path, ".mcp");
    const target = join(dir.path, "out.tar");
    const out = new AtomicFileWriter(state, target);
    for (const p of pieces(40 * 1024 * 1024)) out.write(p);
    out.abort();
    expect(existsSync(target)).toBe(false);
    expect(readdirSync(join(state, "tmp"))).toEqual([]);
  });

  test("without the native module the same bytes give the same file and digest", async () => {
    await using dir = tmpDir("ws-atomic-");
    const script = `
      import { AtomicFileWriter } from ${JSON.stringify(join(ROOT, "src/repo/atomic-stream.ts"))};
      const [state, target] = process.argv.slice(2);
      const out = new AtomicFileWriter(state, target);
      for (let i = 0; i < 3000; i++) {
        out.write(new Uint8Array(i % 7 === 0 ? 200000 : i).fill(i & 0xff));
        const block = out.scratch(512);
        block.fill(i % 251);
        out.write(block);
      }
      console.log(await out.commit());
    `;
    const file = join(dir.path, "write.ts");
    await Bun.write(file, script);
    const run = (native: boolean, target: string) => {
      const p = Bun.spawnSync([process.execPath, file, join(dir.path, ".mcp"), target], { env: { ...process.env, WORKSNAP_NATIVE: native ? "1" : "0" } });
      expect(p.exitCode).toBe(0);
      return p.stdout.toString().trim();
    };
    const a = run(false, join(dir.path, "plain.tar"));
    const b = run(true, join(dir.path, "native.tar"));
    expect(a).toBe(b);
    expect(a).toBe(sha256(readFileSync(join(dir.path, "plain.tar"))));
    expect(Buffer.compare(readFileSync(join(dir.path, "plain.tar")), readFileSync(join(dir.path, "native.tar")))).toBe(0);
  });
});

describe("AtomicFileWriter.stage: a file staged for writeFilesAtomic while it is written (a snapshot's manifest)", () => {
  const prefix = new TextEncoder().encode('{"head_oid":"x"}\n');
  for (const native of [true, false]) {
    test(`the digest covers the prefix and the bytes; writeFilesAtomic puts the file in place whole (${native ? "writer thread, a sync every step" : "without the native module"})`, async () => {
      await using dir = tmpDir("ws-stage-");
      const state = join(dir.path, ".mcp");
      const parts = pieces(12 * 1024 * 1024);
      const script = `
        import { AtomicFileWriter } from ${JSON.stringify(join(ROOT, "src/repo/atomic-stream.ts"))};
        import { writeFilesAtomic } from ${JSON.stringify(join(ROOT, "src/repo/atomic-write.ts"))};
        const [state, target] = process.argv.slice(2);
        const out = new AtomicFileWriter(state, "manifest", 0o644, { hashPrefix: new TextEncoder().encode(${JSON.stringify(new TextDecoder().decode(prefix))}), writebackStep: 1 << 20, durableSteps: true });
        let x = 7;
        for (let n = 0; n < ${parts.length}; n++) {
          x = (x * 1103515245 + 12345) >>> 0;
          out.write(new Uint8Array(n % 4 === 0 ? 300000 : x % 5000).fill(n & 0xff));
        }
        const { staged, sha256 } = out.stage();
        const digest = await sha256;
        await writeFilesAtomic(state, [{ target, bytes: staged }, { target: target + ".meta", bytes: new Uint8Array([1]) }]);
        console.log(digest);
      `;
      const file = join(dir.path, "stage.ts");
      await Bun.write(file, script);
      const target = join(dir.path, "out.manifest");
      const p = Bun.spawnSync([process.execPath, file, state, target], { env: { ...process.env, WORKSNAP_NATIVE: native ? "1" : "0" } });
      expect(p.stderr.toString()).toBe("");
      expect(p.exitCode).toBe(0);
      const written = readFileSync(target);
      expect(p.stdout.toString().trim()).toBe(new Bun.CryptoHasher("sha256").update(prefix).update(written).digest("hex"));
      let x = 7;
      const want: Uint8Array[] = [];
      for (let n = 0; n < parts.length; n++) {
        x = (x * 1103515245 + 12345) >>> 0;
        want.push(new Uint8Array(n % 4 === 0 ? 300000 : x % 5000).fill(n & 0xff));
      }
      expect(Buffer.compare(written, Buffer.concat(want))).toBe(0);
      expect(statSync(target).mode & 0o777).toBe(0o644);
      expect(readdirSync(join(state, "tmp"))).toEqual([]);
    });
  }

  test("a staged file not used is removed by discard, and a writer that failed leaves nothing", async () => {
    await using dir = tmpDir("ws-stage-");
    const state = join(dir.path, ".mcp");
    const out = new AtomicFileWriter(state, "manifest", 0o644, { hashPrefix: prefix, durableSteps: true, writebackStep: 4096 });
    for (const p of pieces(3 * 1024 * 1024)) out.write(p);
    const { staged, sha256 } = out.stage();
    expect((await sha256).length).toBe(64);
    await staged.flushed;
    expect(readdirSync(join(state, "tmp"))).toHaveLength(1);
    await staged.discard();
    expect(readdirSync(join(state, "tmp"))).toEqual([]);
    expect(() => out.write(new Uint8Array(1))).toThrow(/after commit\/abort/);
  });
});
