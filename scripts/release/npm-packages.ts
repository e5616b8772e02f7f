// The npm packages of a release, the pattern esbuild and Biome use: `worksnap` (a small launcher, npm/worksnap/)
// with one optional dependency per platform, `@worksnap/<target>` (npm/platform/), each carrying one executable
// and limited by "os", "cpu" and "libc" so npm installs only the one that runs here. The repository's own
// package.json stays the private development package; these are generated from it.
import { chmodSync, copyFileSync, cpSync, linkSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { TARGETS, TARGET_NAMES, type Target } from "../targets.ts";

const ROOT = resolve(import.meta.dir, "..", "..");
const TEMPLATES = join(ROOT, "npm");
export const SCOPE = "@worksnap";

export const platformPackageName = (target: Target) => `${SCOPE}/${target}`;

/** Fields of the repository's package.json that the published packages carry over when they are set. */
const CARRIED = ["license", "repository", "homepage", "bugs", "author", "keywords"] as const;

function carried(): Record<string, unknown> {
  const pkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  return Object.fromEntries(CARRIED.filter((k) => pkg[k] !== undefined).map((k) => [k, pkg[k]]));
}

export interface NpmPackageDirs {
  main: string;
  platforms: Partial<Record<Target, string>>;
}

/**
 * Writes the package directories under outDir: worksnap/ and one per target in `binaries` (the executable is
 * hard-linked when it can be, copied otherwise).
 */
export function writeNpmPackages(outDir: string, version: string, binaries: Partial<Record<Target, string>>): NpmPackageDirs {
  const rootPkg = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8"));
  rmSync(outDir, { recursive: true, force: true });
  const main = join(outDir, "worksnap");
  cpSync(join(TEMPLATES, "worksnap"), main, { recursive: true });
  const mainPkg = {
    name: "worksnap",
    version,
    description: rootPkg.description,
    ...carried(),
    bin: { worksnap: "bin/worksnap.js", mcpdiff: "bin/mcpdiff.js" },
    files: ["bin", "lib", "README.md"],
    engines: { node: ">=18" },
    optionalDependencies: Object.fromEntries(TARGET_NAMES.map((t) => [platformPackageName(t), version])),
  };
  writeFileSync(join(main, "package.json"), `${JSON.stringify(mainPkg, null, 2)}\n`);
  const platforms: NpmPackageDirs["platforms"] = {};
  for (const target of TARGET_NAMES) {
    const binary = binaries[target];
    if (!binary) continue;
    const spec = TARGETS[target];
    const dir = join(outDir, target);
    mkdirSync(join(dir, "bin"), { recursive: true });
    const pkg = {
      name: platformPackageName(target),
      version,
      description: `The ${target} executable of worksnap (install "worksnap", which picks it)`,
      ...carried(),
      os: [spec.os],
      cpu: [spec.cpu],
      ...(spec.os === "linux" ? { libc: ["glibc"] } : {}),
      files: ["bin/worksnap", "README.md"],
      preferUnplugged: true,
    };
    writeFileSync(join(dir, "package.json"), `${JSON.stringify(pkg, null, 2)}\n`);
    writeFileSync(join(dir, "README.md"), readFileSync(join(TEMPLATES, "platform", "README.md"), "utf8").replaceAll("{{target}}", target));
    const out = join(dir, "bin", "worksnap");
    try {
      linkSync(binary, out);
    } catch {
      copyFileSync(binary, out);
    }
    chmodSync(out, 0o755);
    platforms[target] = dir;
  }
  return { main, platforms };
}

/** `npm pack` of each directory into dest; returns the tarballs' paths, platform packages first. */
export function packNpmPackages(dirs: NpmPackageDirs, dest: string): string[] {
  mkdirSync(dest, { recursive: true });
  const tarballs: string[] = [];
  for (const dir of [...Object.values(dirs.platforms), dirs.main]) {
    const r = Bun.spawnSync(["npm", "pack", "--json", "--pack-destination", dest], { cwd: dir, stdout: "pipe", stderr: "pipe" });
    if (r.exitCode !== 0) throw new Error(`npm pack in ${dir} failed: ${r.stderr.toString()}`);
    const [info] = JSON.parse(r.stdout.toString()) as { filename: string }[];
    tarballs.push(join(dest, info!.filename));
  }
  return tarballs;
}
