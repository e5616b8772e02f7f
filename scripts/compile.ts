// One place that turns src/ into a worksnap executable for a target: `npm run build` (this machine, into
// dist/worksnap) and `npm run release` (every target) both call compileWorksnap.
import { existsSync, mkdirSync, openSync, readSync, closeSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { BuildInfo } from "../src/version.ts";
import { NATIVE_OUTPUT } from "./build-native.ts";
import { HOST_TARGET, TARGETS, isTarget } from "./targets.ts";

const ROOT = resolve(import.meta.dir, "..");

/**
 * Bun's start-up options, as bench/startup.ts measured them (bench/README.md, "start-up"): the module graph
 * precompiled to bytecode (the MCP initialize reply about twice as soon, `--version` about 5x sooner, 4 MB more),
 * whitespace and syntax minified. Identifiers are not minified: no measurable gain, and unreadable names in
 * the stack traces an INTERNAL error carries. The bundle is CommonJS: its bytecode loads sooner than an ES
 * module's, whose cost grows with the code of every command, loaded or not (bench/README.md, "start-up").
 */
export const STARTUP_OPTIONS = { bytecode: true, minifyIdentifiers: false, format: "cjs" as "esm" | "cjs" };

export interface CompileOptions {
  target: string;
  outfile: string;
  /** Empty when build/native/worksnap.node holds the target's module; otherwise why there is none. */
  nativeNote: string;
  /** A Bun runtime for the target (scripts/release/runtimes.ts); none: Bun's own for this machine. */
  executablePath?: string;
  commit?: string;
  bytecode?: boolean;
  minifyIdentifiers?: boolean;
  /** the bundle's module format (STARTUP_OPTIONS.format unless given) */
  format?: "esm" | "cjs";
}

/** `git rev-parse` of the tree being built, `-dirty` when tracked files differ; WORKSNAP_COMMIT overrides. */
export function gitCommit(): string {
  if (process.env.WORKSNAP_COMMIT) return process.env.WORKSNAP_COMMIT;
  const head = Bun.spawnSync(["git", "rev-parse", "--short=12", "HEAD"], { cwd: ROOT, stdout: "pipe", stderr: "ignore" });
  if (head.exitCode !== 0) return "unknown";
  const dirty = Bun.spawnSync(["git", "status", "--porcelain", "--untracked-files=no"], { cwd: ROOT, stdout: "pipe", stderr: "ignore" });
  return `${head.stdout.toString().trim()}${dirty.stdout.length > 0 ? "-dirty" : ""}`;
}

/** The ELF machine of a module (62 x86-64, 183 AArch64), or null when it is not an ELF file. */
export function elfMachine(file: string): number | null {
  const fd = openSync(file, "r");
  try {
    const head = Buffer.alloc(20);
    if (readSync(fd, head, 0, 20, 0) < 20 || head.readUInt32BE(0) !== 0x7f454c46) return null;
    return head.readUInt16LE(18);
  } finally {
    closeSync(fd);
  }
}

export async function compileWorksnap(o: CompileOptions): Promise<BuildInfo> {
  const embedded = o.nativeNote === "";
  if (embedded) {
    const want = isTarget(o.target) ? TARGETS[o.target].elfMachine : null;
    if (!existsSync(NATIVE_OUTPUT)) throw new Error(`${NATIVE_OUTPUT} is missing but the build says the module is embedded`);
    const got = elfMachine(NATIVE_OUTPUT);
    if (want !== null && got !== want) throw new Error(`${NATIVE_OUTPUT} is for ELF machine ${got}, not ${o.target}`);
  }
  const info: BuildInfo = { commit: o.commit ?? gitCommit(), target: o.target, nativeNote: o.nativeNote };
  mkdirSync(dirname(o.outfile), { recursive: true });
  const bytecode = o.bytecode ?? STARTUP_OPTIONS.bytecode;
  const cross = o.target !== HOST_TARGET;
  const result = await Bun.build({
    entrypoints: [join(ROOT, "src/main.ts"), join(ROOT, "src/repo/hash-worker.ts"), join(ROOT, "src/repo/trigram-index/build-worker.ts"), join(ROOT, "src/repo/verified-read-worker.ts")],
    compile: {
      outfile: o.outfile,
      ...(cross && isTarget(o.target) ? { target: TARGETS[o.target].bun as Bun.Build.CompileTarget } : {}),
      ...(o.executablePath ? { executablePath: o.executablePath } : {}),
      // a repository's .env or bunfig.toml (its `preload` scripts) must never run inside worksnap
      autoloadDotenv: false,
      autoloadBunfig: false,
      autoloadTsconfig: false,
      autoloadPackageJson: false,
    },
    define: { WORKSNAP_BUILD: JSON.stringify(info) },
    minify: { syntax: true, whitespace: true, identifiers: o.minifyIdentifiers ?? STARTUP_OPTIONS.minifyIdentifiers },
    format: o.format ?? STARTUP_OPTIONS.format,
    ...(bytecode ? { bytecode: true } : {}),
    sourcemap: "none",
  });
  if (!result.success) throw new AggregateError(result.logs, `compiling ${o.target} failed:\n${result.logs.join("\n")}`);
  return info;
}
