/** Many files made durable with one flush: syncfs where it is safe, one fsync per file otherwise. */
import { afterEach, describe, expect, test } from "bun:test";
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { release } from "node:os";
import { join } from "node:path";
import {
  chooseFlush,
  configureDurability,
  DurableBatch,
  kernelAtLeast,
  SYNCFS_MAX_FOREIGN_DIRTY,
  SYNCFS_MIN_FILES,
  syncfsSupported,
  syncFileSystem,
} from "../../src/repo/durable";
import { nativeModule } from "../../src/repo/native";
import { tmpDir } from "../helpers/tmp-repo";

const BUN = join(import.meta.dir, "..", "..", "node_modules", ".bin", "bun");
const DURABLE = join(import.meta.dir, "..", "..", "src", "repo", "durable.ts");
const enc = (s: string) => new TextEncoder().encode(s);
/** Where syncfs must be available: Linux 5.8+ with glibc (this project's CI and release targets; not musl). */
const expectSyncfs = process.platform === "linux" && kernelAtLeast(release(), 5, 8) && !existsSync("/etc/alpine-release");

afterEach(() => configureDurability({ syncfs: true }));

describe("chooseFlush", () => {
  test("few files, or much dirty data of others on the machine, take per-file fsync", () => {
    expect(chooseFlush(SYNCFS_MIN_FILES - 1, 0, 0)).toBe("fsync");
    expect(chooseFlush(500, 1_000_000, 1_000_000 + SYNCFS_MAX_FOREIGN_DIRTY + 1)).toBe("fsync");
    expect(chooseFlush(500, 0, null)).toBe("fsync"); // dirty amount unknown
    expect(chooseFlush(500, 200_000_000, 200_000_000 + 1024)).toBe(syncfsSupported() ? "syncfs" : "fsync");
  });

  test("configureDurability({ syncfs: false }) turns syncfs off", () => {
    configureDurability({ syncfs: false });
    expect(chooseFlush(500, 0, 0)).toBe("fsync");
  });

  test("kernel versions: syncfs reports write-back errors from 5.8 on", () => {
    expect(kernelAtLeast("5.8.0-generic", 5, 8)).toBe(true);
    expect(kernelAtLeast("6.1.2", 5, 8)).toBe(true);
    expect(kernelAtLeast("5.7.19", 5, 8)).toBe(false);
    expect(kernelAtLeast("4.19.0", 5, 8)).toBe(false);
    expect(kernelAtLeast("garbage", 5, 8)).toBe(false);
  });
});

describe("DurableBatch", () => {
  for (const mode of ["syncfs", "fsync"] as const) {
    test(`${mode}: every file has exactly its bytes and permission bits; directories are flushed`, async () => {
      await using tmp = tmpDir("durable-");
      configureDurability({ syncfs: mode === "syncfs" });
      const dir = join(tmp.path, "tmp");
      mkdirSync(dir);
      using batch = new DurableBatch(dir);
      const files = Array.from({ length: SYNCFS_MIN_FILES * 3 }, (_, i) => join(dir, `f${i}`));
      files.forEach((f, i) => batch.writeFile(f, enc(`file ${i}\n`), i % 2 ? 0o755 : 0o600));
      expect(batch.size).toBe(files.length);
      await batch.flush();
      expect(batch.size).toBe(0);
      // The syncfs path also depends on the machine's dirty data at this moment; the fsync path never takes syncfs.
      if (mode === "fsync") expect(batch.lastMethod).toBe("fsync");
      else expect(["syncfs", "fsync"]).toContain(batch.lastMethod!);
      files.forEach((f, i) => {
        expect(readFileSync(f, "utf8")).toBe(`file ${i}\n`);
        expect(statSync(f).mode & 0o7777).toBe(i % 2 ? 0o755 : 0o600);
      });
      await batch.syncDirs([dir, tmp.path, dir]);
    });
  }

  test("a batch never overwrites: writeFile refuses an existing path", async () => {
    await using tmp = tmpDir("durable-");
    const file = join(tmp.path, "exists");
    writeFileSync(file, "keep\n");
    using batch = new DurableBatch(tmp.path);
    expect(() => batch.writeFile(file, enc("new\n"), 0o644)).toThrow();
    expect(readFileSync(file, "utf8")).toBe("keep\n");
  });

  test("a registered file that cannot be flushed is an error, never a silent success", async () => {
    await using tmp = tmpDir("durable-");
    configureDurability({ syncfs: false });
    using batch = new DurableBatch(tmp.path);
    batch.add(join(tmp.path, "gone"), 10); // registered, then missing: its fsync must fail
    await expect(batch.flush()).rejects.toThrow();
  });

  test("directories that are gone or refuse fsync do not fail syncDirs", async () => {
    await using tmp = tmpDir("durable-");
    configureDurability({ syncfs: false });
    using batch = new DurableBatch(tmp.path);
    await batch.syncDirs([join(tmp.path, "missing"), tmp.path]);
  });
});

describe("syncfs", () => {
  test.if(expectSyncfs)("is reachable through bun:ffi on this system", async () => {
    await using tmp = tmpDir("durable-");
    expect(syncfsSupported()).toBe(true);
    expect(syncFileSystem(tmp.path)).toBe(true);
  });

  test.if(expectSyncfs)("works from a compiled binary (bun build --compile), as in dist/worksnap", async () => {
    await using tmp = tmpDir("durable-bin-");
    const entry = join(tmp.path, "entry.ts");
    writeFileSync(
      entry,
      `import { syncFileSystem, syncfsSupported } from ${JSON.stringify(DURABLE)};
console.log(JSON.stringify({ supported: syncfsSupported(), synced: syncFileSystem(${JSON.stringify(tmp.path)}) }));
`,
    );
    const bin = join(tmp.path, "durable-bin");
    const build = Bun.spawnSync([BUN, "build", "--compile", "--minify", entry, "--outfile", bin], { stderr: "pipe", stdout: "pipe" });
    expect(build.exitCode, build.stderr.toString()).toBe(0);
    const run = Bun.spawnSync([bin], { stdout: "pipe", stderr: "pipe", cwd: tmp.path, timeout: 30_000 });
    expect(run.stderr.toString()).toBe("");
    expect(JSON.parse(run.stdout.toString())).toEqual({ supported: true, synced: true });
  }, 60_000);

  test("WORKSNAP_SYNCFS=0 in the environment turns syncfs off in a new process", () => {
    const script = `const d = require(${JSON.stringify(DURABLE)}); console.log(d.chooseFlush(100, 0, 0));`;
    const method = (env: Record<string, string>) =>
      Bun.spawnSync([BUN, "-e", script], { env: { ...process.env, ...env }, stdout: "pipe", stderr: "pipe" }).stdout.toString().trim();
    expect(method({ WORKSNAP_SYNCFS: "0" })).toBe("fsync");
    expect(method({ WORKSNAP_SYNCFS: "1" })).toBe(syncfsSupported() ? "syncfs" : "fsync");
  });
});

describe.skipIf(nativeModule()?.syncfsStart === undefined)("a flush on the native module's own thread", () => {
  const m = nativeModule()!;

  test("syncfsStart returns at once; the JavaScript thread takes turns while 48 MB are written back; the result is 0", async () => {
    await using tmp = tmpDir("durable-native-");
    writeFileSync(join(tmp.path, "dirty"), new Uint8Array(48 * 1024 * 1024).fill(7)); // written back by the flush
    const fd = openSync(tmp.path, "r");
    try {
      let turns = 0;
      let turning = true;
      const turn = () => {
        turns++;
        if (turning) setImmediate(turn);
      };
      const t0 = performance.now();
      const flush = m.syncfsStart!(fd);
      const started = performance.now() - t0;
      setImmediate(turn);
      let result: number | null;
      let polls = 0;
      while ((result = m.syncfsResult!(flush)) === null) {
        polls++;
        await Bun.sleep(1);
      }
      const took = performance.now() - t0;
      turning = false;
      expect(result).toBe(0);
      expect(started).toBeLessThan(50);
      // a flush that went on well after the start returned was seen running from this thread, which took turns
      // meanwhile (a result that waited for the flush on this thread would be found at the first poll, with no
      // turn). How many turns depends on how a loaded machine schedules this process: one is enough to tell
      if (took > started + 20) {
        expect(polls).toBeGreaterThan(0);
        expect(turns).toBeGreaterThanOrEqual(1);
      }
    } finally {
      closeSync(fd);
    }
  });

  test("a descriptor that is not open is a clear error; a handle outlives its descriptor", async () => {
    expect(() => m.syncfsStart!(987_654)).toThrow(/cannot duplicate the descriptor to flush/);
    await using tmp = tmpDir("durable-native-");
    const fd = openSync(tmp.path, "r");
    const flush = m.syncfsStart!(fd);
    closeSync(fd); // the flush holds its own duplicate
    let result: number | null;
    while ((result = m.syncfsResult!(flush)) === null) await Bun.sleep(1);
    expect(result).toBe(0);
  });
});
