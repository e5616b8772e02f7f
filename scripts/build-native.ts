// Compiles src/native/*.c into build/native/worksnap.node, a Node-API module, with the first C compiler found
// (CC, cc, gcc, clang) and the Node-API headers from the pinned node-api-headers package. Any older output is
// removed first, so a failed compile never leaves a stale module to be embedded.
import { existsSync, mkdirSync, readdirSync, rmSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dir, "..");
export const NATIVE_OUTPUT = join(ROOT, "build", "native", "worksnap.node");

export type NativeBuild = { ok: true; output: string; compiler: string } | { ok: false; reason: string };

export function buildNative(): NativeBuild {
  rmSync(NATIVE_OUTPUT, { force: true });
  if (process.env.WORKSNAP_BUILD_NATIVE === "0") return { ok: false, reason: "WORKSNAP_BUILD_NATIVE=0" };
  const headers = join(ROOT, "node_modules", "node-api-headers", "include");
  if (!existsSync(join(headers, "node_api.h"))) return { ok: false, reason: "node-api-headers is not installed (run npm ci)" };
  const compiler = [process.env.CC, "cc", "gcc", "clang"].find((c) => c && Bun.which(c));
  if (!compiler) return { ok: false, reason: "no C compiler (cc, gcc or clang) on PATH" };
  const dir = join(ROOT, "src", "native");
  const sources = readdirSync(dir).filter((f) => f.endsWith(".c")).sort().map((f) => join(dir, f));
  mkdirSync(join(ROOT, "build", "native"), { recursive: true });
  // Node-API symbols come from the process that loads the module: macOS must be told to leave them unresolved
  const platform = process.platform === "darwin" ? ["-undefined", "dynamic_lookup"] : [];
  const args = [compiler, "-O2", "-std=gnu11", "-Wall", "-Wextra", "-shared", "-fPIC", "-pthread", "-fvisibility=hidden", ...platform, "-I", headers, "-o", NATIVE_OUTPUT, ...sources];
  const r = Bun.spawnSync(args, { stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) {
    rmSync(NATIVE_OUTPUT, { force: true });
    const why = new TextDecoder().decode(r.stderr).trim().split("\n").slice(0, 5).join("\n  ");
    return { ok: false, reason: `${compiler} exited with ${r.exitCode}${why ? `:\n  ${why}` : ""}` };
  }
  return { ok: true, output: NATIVE_OUTPUT, compiler };
}

if (import.meta.main) {
  const r = buildNative();
  console.log(r.ok ? `built ${r.output} (${r.compiler})` : `native module not built: ${r.reason}`);
  if (!r.ok) process.exit(1);
}
