// The Bun runtime each target's executable is built on: the same version as the pinned `bun` devDependency,
// from the npm registry's @oven/bun-<os>-<arch> package (what `bun build --compile --target` would download
// itself), fetched with `npm pack` so the registry configuration and npm's integrity check apply. Kept under
// build/runtimes/ between releases.
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { HOST_TARGET, TARGETS, type Target } from "../targets.ts";

const ROOT = resolve(import.meta.dir, "..", "..");

export const BUN_VERSION: string = JSON.parse(readFileSync(join(ROOT, "node_modules", "bun", "package.json"), "utf8")).version;

export interface Runtime {
  /** Absolute path of the runtime executable; null for this machine's target (Bun builds on itself). */
  path: string | null;
  /** `@oven/bun-...@version`, and the tarball's integrity when this release fetched or cached it. */
  spec: string;
  integrity: string | null;
}

export function runtimeFor(target: Target): Runtime {
  const name = `@oven/${TARGETS[target].runtime}`;
  const spec = `${name}@${BUN_VERSION}`;
  if (target === HOST_TARGET) return { path: null, spec, integrity: null };
  const dir = join(ROOT, "build", "runtimes", `${TARGETS[target].runtime}-${BUN_VERSION}`);
  const bin = join(dir, "bin", "bun");
  const integrityFile = join(dir, "integrity");
  if (!existsSync(bin) || !existsSync(integrityFile)) {
    const work = mkdtempSync(join(tmpdir(), "worksnap-runtime-"));
    try {
      const r = Bun.spawnSync(["npm", "pack", spec, "--json", "--pack-destination", work], { cwd: work, stdout: "pipe", stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(`npm pack ${spec} failed:\n${r.stderr.toString()}`);
      const [info] = JSON.parse(r.stdout.toString()) as { filename: string; integrity: string }[];
      const x = Bun.spawnSync(["tar", "-xzf", join(work, info!.filename), "-C", work], { stderr: "pipe" });
      if (x.exitCode !== 0) throw new Error(`unpacking ${spec} failed: ${x.stderr.toString()}`);
      rmSync(dir, { recursive: true, force: true });
      mkdirSync(join(ROOT, "build", "runtimes"), { recursive: true });
      renameSync(join(work, "package"), dir);
      chmodSync(bin, 0o755);
      Bun.write(integrityFile, `${info!.integrity}\n`);
    } finally {
      rmSync(work, { recursive: true, force: true });
    }
  }
  return { path: bin, spec, integrity: readFileSync(integrityFile, "utf8").trim() };
}
