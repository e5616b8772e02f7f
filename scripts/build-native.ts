// Compiles src/native/*.c into a Node-API module (build/native/worksnap.node by default) for this machine or,
// with a cross compiler, for another Linux target: the first of CC, cc, gcc, clang for this machine's target;
// CC_<TARGET> (CC_LINUX_ARM64) or `<triple>-gcc` (aarch64-linux-gnu-gcc, Debian's gcc-aarch64-linux-gnu) for
// another. Node-API headers come from the pinned node-api-headers package. Any older output is removed first,
// so a failed compile never leaves a stale module to be embedded.
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import { HOST_TARGET, TARGETS, isTarget } from "./targets.ts";

const ROOT = resolve(import.meta.dir, "..");
/** The path src/repo/native.ts requires, so the one the bundler embeds. */
export const NATIVE_OUTPUT = join(ROOT, "build", "native", "worksnap.node");

export type NativeBuild = { ok: true; output: string; compiler: string } | { ok: false; reason: string };

/** The module built for `target` by the release (build/native/<target>/worksnap.node). */
export function nativeOutputFor(target: string): string {
  return join(ROOT, "build", "native", target, "worksnap.node");
}

function compilerFor(target: string): { compiler?: string; missing: string } {
  if (target === HOST_TARGET) {
    return { compiler: [process.env.CC, "cc", "gcc", "clang"].find((c) => c && Bun.which(c)), missing: "no C compiler (cc, gcc or clang) on PATH" };
  }
  const spec = isTarget(target) ? TARGETS[target] : undefined;
  if (!spec?.triple || !process.platform.startsWith(spec.os)) {
    return { missing: `no toolchain builds the native module for ${target} here (it is built for Linux targets only)` };
  }
  const envName = `CC_${target.toUpperCase().replace(/-/g, "_")}`;
  const named = process.env[envName] ?? `${spec.triple}-gcc`;
  return { compiler: Bun.which(named) ? named : undefined, missing: `${named} is not on PATH (Debian: apt-get install gcc-${spec.triple}; or set ${envName})` };
}

export function buildNative(opts: { target?: string; output?: string } = {}): NativeBuild {
  const target = opts.target ?? HOST_TARGET;
  const output = opts.output ?? NATIVE_OUTPUT;
  rmSync(output, { force: true });
  if (process.env.WORKSNAP_BUILD_NATIVE === "0") return { ok: false, reason: "WORKSNAP_BUILD_NATIVE=0" };
  const headers = join(ROOT, "node_modules", "node-api-headers", "include");
  if (!existsSync(join(headers, "node_api.h"))) return { ok: false, reason: "node-api-headers is not installed (run npm ci)" };
  const { compiler, missing } = compilerFor(target);
  if (!compiler) return { ok: false, reason: missing };
  const dir = join(ROOT, "src", "native");
  const sources = readdirSync(dir).filter((f) => f.endsWith(".c")).sort().map((f) => join(dir, f));
  mkdirSync(dirname(output), { recursive: true });
  // Node-API symbols come from the process that loads the module: macOS must be told to leave them unresolved
  const platform = target.startsWith("darwin") ? ["-undefined", "dynamic_lookup"] : [];
  const args = [compiler, "-O2", "-std=gnu11", "-Wall", "-Wextra", "-shared", "-fPIC", "-pthread", "-fvisibility=hidden", ...platform, "-I", headers, "-o", output, ...sources];
  const r = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    rmSync(output, { force: true });
    const why = new TextDecoder().decode(r.stderr).trim().split("\n").slice(0, 5).join("\n  ");
    return { ok: false, reason: `${compiler} exited with ${r.exitCode}${why ? `:\n  ${why}` : ""}` };
  }
  return { ok: true, output, compiler };
}

/** Puts `module` (or nothing) where the bundler embeds it from. */
export function stageNative(module: string | null): void {
  rmSync(NATIVE_OUTPUT, { force: true });
  if (!module) return;
  mkdirSync(dirname(NATIVE_OUTPUT), { recursive: true });
  copyFileSync(module, NATIVE_OUTPUT);
}

if (import.meta.main) {
  const target = process.argv[2];
  const r = buildNative(target ? { target, output: nativeOutputFor(target) } : {});
  console.log(r.ok ? `built ${r.output} (${r.compiler})` : `native module not built: ${r.reason}`);
  if (!r.ok) process.exit(1);
}
