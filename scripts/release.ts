// `npm run release`: builds worksnap for every target into dist/release/ (the executables, SHA256SUMS,
// release.json, the npm packages and their tarballs), then runs the release smoke tests on what it built
// (scripts/release/smoke.ts, also `npm run release:test`). docs/release.md describes how a release is cut.
//
//   bun scripts/release.ts [--skip-smoke] [--no-install]
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join, relative, resolve } from "node:path";
import { buildNative, nativeOutputFor, stageNative } from "./build-native.ts";
import { buildReviewPage } from "./build-page.ts";
import { compileWorksnap, gitCommit } from "./compile.ts";
import { checkElf, checkMachO, readBinary } from "./release/binary-format.ts";
import { signAdHoc } from "./release/macho-sign.ts";
import { packNpmPackages, writeNpmPackages } from "./release/npm-packages.ts";
import { ensurePrereqs } from "./release/prereqs.ts";
import { BUN_VERSION, runtimeFor } from "./release/runtimes.ts";
import { runSmoke } from "./release/smoke.ts";
import { HOST_TARGET, TARGETS, TARGET_NAMES, type Target } from "./targets.ts";

const ROOT = resolve(import.meta.dir, "..");
export const RELEASE_DIR = join(ROOT, "dist", "release");

export interface ReleaseManifest {
  version: string;
  commit: string;
  bun: string;
  targets: Record<Target, { file: string; size: number; sha256: string; native: string; runtime: string; runtime_integrity: string | null; signature?: string }>;
  npm: { file: string; size: number; integrity: string }[];
}

const sha256 = (bytes: Uint8Array) => new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
const sha512 = (bytes: Uint8Array) => `sha512-${new Bun.CryptoHasher("sha512").update(bytes).digest("base64")}`;
const mb = (n: number) => `${(n / 1e6).toFixed(1)} MB`;

async function buildTarget(target: Target, commit: string): Promise<ReleaseManifest["targets"][Target]> {
  const spec = TARGETS[target];
  let nativeNote = `not built for ${target}: macOS executables use the TypeScript paths`;
  if (spec.os === "linux") {
    const native = buildNative({ target, output: nativeOutputFor(target) });
    if (!native.ok) throw new Error(`the native module for ${target} did not build: ${native.reason}`);
    console.log(`  native module: ${relative(ROOT, native.output)} (${native.compiler})`);
    nativeNote = "";
  }
  stageNative(spec.os === "linux" ? nativeOutputFor(target) : null);
  const runtime = runtimeFor(target);
  const file = `worksnap-${target}`;
  const outfile = join(RELEASE_DIR, file);
  await compileWorksnap({ target, outfile, nativeNote, commit, executablePath: runtime.path ?? undefined });
  let bytes = readBinary(outfile);
  let signature: string | undefined;
  if (spec.os === "darwin") {
    try {
      checkMachO(bytes, spec.cpu);
      signature = "ad hoc, as Bun wrote it";
    } catch (err) {
      // Bun 1.4.5 keeps the darwin-x64 runtime's own signature, which the bundle invalidates (macho-sign.ts)
      console.log(`  Bun's signature does not verify (${(err as Error).message}): signing ad hoc`);
      bytes = signAdHoc(bytes, "worksnap");
      await Bun.write(outfile, bytes);
      signature = "ad hoc, re-signed by scripts/release/macho-sign.ts";
    }
    const report = checkMachO(bytes, spec.cpu);
    console.log(`  Mach-O ${report.cpu}, __BUN ${mb(report.bunSegment)}, signature ${report.signature.hash} over ${report.signature.pages} pages verified`);
  } else {
    checkElf(bytes, spec.elfMachine);
  }
  return {
    file,
    size: bytes.length,
    sha256: sha256(bytes),
    native: nativeNote === "" ? "embedded" : nativeNote,
    runtime: runtime.path ? runtime.spec : `${runtime.spec} (this machine's)`,
    runtime_integrity: runtime.integrity,
    ...(signature ? { signature } : {}),
  };
}

export async function release(opts: { smoke: boolean; install: boolean }): Promise<ReleaseManifest> {
  const started = Date.now();
  ensurePrereqs({ install: opts.install });
  const version: string = JSON.parse(readFileSync(join(ROOT, "package.json"), "utf8")).version;
  const commit = gitCommit();
  if (commit.endsWith("-dirty") || commit === "unknown") console.log(`warning: building from commit ${commit}; a release is cut from a clean, tagged commit`);
  rmSync(RELEASE_DIR, { recursive: true, force: true });
  mkdirSync(RELEASE_DIR, { recursive: true });
  console.log(`worksnap ${version} (commit ${commit}), Bun ${BUN_VERSION}`);
  await buildReviewPage(); // the review page's script, the same in every target
  const targets = {} as ReleaseManifest["targets"];
  try {
    for (const target of TARGET_NAMES) {
      console.log(`${target}:`);
      targets[target] = await buildTarget(target, commit);
    }
  } finally {
    // leave this machine's module where the source runs and `npm run build` expect it
    const host = nativeOutputFor(HOST_TARGET);
    if (existsSync(host)) stageNative(host);
    else buildNative();
  }
  const sums = TARGET_NAMES.map((t) => `${targets[t].sha256}  ${targets[t].file}\n`).join("");
  writeFileSync(join(RELEASE_DIR, "SHA256SUMS"), sums);

  const npmDir = join(RELEASE_DIR, "npm");
  const dirs = writeNpmPackages(npmDir, version, Object.fromEntries(TARGET_NAMES.map((t) => [t, join(RELEASE_DIR, targets[t].file)])));
  const tarballs = packNpmPackages(dirs, npmDir);
  const npm = tarballs.map((f) => {
    const bytes = readBinary(f);
    return { file: relative(RELEASE_DIR, f), size: bytes.length, integrity: sha512(bytes) };
  });
  const manifest: ReleaseManifest = { version, commit, bun: BUN_VERSION, targets, npm };
  writeFileSync(join(RELEASE_DIR, "release.json"), `${JSON.stringify(manifest, null, 2)}\n`);

  console.log(`\ndist/release/ (${((Date.now() - started) / 1000).toFixed(0)} s):`);
  for (const t of TARGET_NAMES) console.log(`  ${targets[t].file.padEnd(24)} ${mb(targets[t].size).padStart(9)}  native: ${targets[t].native === "embedded" ? "embedded" : "no (TypeScript paths)"}`);
  for (const n of npm) console.log(`  ${n.file.padEnd(40)} ${mb(n.size).padStart(9)}`);
  console.log("  SHA256SUMS, release.json");
  if (opts.smoke) await runSmoke(RELEASE_DIR);
  return manifest;
}

if (import.meta.main) {
  const args = new Set(process.argv.slice(2));
  for (const a of args) if (a !== "--skip-smoke" && a !== "--no-install") throw new Error(`unknown option ${a} (use --skip-smoke, --no-install)`);
  try {
    await release({ smoke: !args.has("--skip-smoke"), install: !args.has("--no-install") });
  } catch (err) {
    console.error(`release failed: ${err instanceof Error ? err.message : String(err)}`);
    process.exit(1);
  }
}
