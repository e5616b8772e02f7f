// The release smoke tests (`npm run release` runs them last; `npm run release:test` runs them on an existing
// dist/release/): each Linux executable, the arm64 one under qemu-user, runs --version, snapshots a small
// repository (every target must give the same snapshot id and the same export bundle) and answers an MCP
// handshake through the SDK's client; the darwin executables, which cannot run here, are checked for format,
// embedded bundle and code signature; the npm packages are installed from their tarballs through a loopback
// registry and run with npx.
import { mkdirSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import type { ReleaseManifest } from "../release.ts";
import { HOST_TARGET, TARGETS, TARGET_NAMES, type Target } from "../targets.ts";
import { checkMachO, codeDirectoryIdentifier, readBinary } from "./binary-format.ts";
import { signAdHoc } from "./macho-sign.ts";
import { npmEndToEnd } from "./npm-e2e.ts";
import { expect, mcpHandshake, run, runnerFor, smallRepo, versionFields, type Check } from "./smoke-lib.ts";

const ROOT = resolve(import.meta.dir, "..", "..");

/** Flips one byte of a copy and expects the Mach-O check to notice (so the check is known to bite). */
function tampered(bytes: Uint8Array, at: number): Uint8Array {
  const copy = bytes.slice();
  copy[at] = copy[at]! ^ 0xff;
  return copy;
}

function indexOf(hay: Uint8Array, needle: string): number {
  return Buffer.from(hay.buffer, hay.byteOffset, hay.byteLength).indexOf(Buffer.from(needle));
}

export async function runSmoke(releaseDir: string): Promise<void> {
  const manifest: ReleaseManifest = JSON.parse(readFileSync(join(releaseDir, "release.json"), "utf8"));
  const results: { name: string; ok: boolean; error?: string }[] = [];
  const check: Check = async (name, fn) => {
    const t0 = Date.now();
    try {
      await fn();
      results.push({ name, ok: true });
      console.log(`  ok    ${name} (${((Date.now() - t0) / 1000).toFixed(1)} s)`);
    } catch (err) {
      const error = err instanceof Error ? err.message : String(err);
      results.push({ name, ok: false, error });
      console.log(`  FAIL  ${name}\n        ${error.replace(/\n/g, "\n        ")}`);
    }
  };
  const work = mkdtempSync(join(tmpdir(), "worksnap-smoke-"));
  console.log("\nrelease smoke tests:");
  try {
    await check("SHA256SUMS verifies every executable (sha256sum -c)", () => {
      const r = run(["sha256sum", "-c", "SHA256SUMS"], { cwd: releaseDir });
      expect(r.code === 0, r.stdout + r.stderr);
      expect(r.stdout.trim().split("\n").length === TARGET_NAMES.length, `SHA256SUMS lists ${r.stdout.trim().split("\n").length} files`);
    });

    const ids = new Map<Target, { cli: string; mcp: string; bundle: string }>();
    for (const target of TARGET_NAMES.filter((t) => TARGETS[t].os === "linux")) {
      const exe = [...runnerFor(target), join(releaseDir, manifest.targets[target].file)];
      const how = target === HOST_TARGET ? "" : " under qemu-user";
      const dir = join(work, target);
      mkdirSync(dir);
      const root = smallRepo(dir);
      const got = { cli: "", mcp: "", bundle: "" };
      await check(`${target}${how}: --version names version, commit, target, native module, state format`, () => {
        const r = run([...exe, "--version"]);
        expect(r.code === 0, `exit ${r.code}: ${r.stderr}`);
        const v = versionFields(r.stdout);
        expect(v.version === manifest.version && v.commit === manifest.commit && v.target === target, `--version said:\n${r.stdout}`);
        expect(/^on \(sha256 (sha-ni|portable), \d+ threads\)$/.test(v.native ?? ""), `native: ${v.native}`);
        expect(/^\d+$/.test(v["state format"] ?? ""), `state format: ${v["state format"]}`);
      });
      await check(`${target}${how}: snapshot create and export of a small repository`, () => {
        const r = run([...exe, "snapshot", "create", "--json", "--root", root]);
        expect(r.code === 0, `exit ${r.code}: ${r.stderr}`);
        const created = JSON.parse(r.stdout);
        expect(created.manifest_stats.files === 9, `captured ${JSON.stringify(created.manifest_stats)}`);
        got.cli = created.snapshot_id;
        const e = run([...exe, "snapshot", "export", got.cli, "--json", "-o", join(dir, "bundle.tar"), "--root", root]);
        expect(e.code === 0, `export exit ${e.code}: ${e.stderr}`);
        got.bundle = JSON.parse(e.stdout).sha256;
        const f = run([...exe, "snapshot", "file", "docs/naïve café.md", "--snapshot", got.cli, "--root", root]);
        expect(f.stdout === "Unicode path\n", `snapshot file gave ${JSON.stringify(f.stdout)}`);
      });
      await check(`${target}${how}: MCP handshake and tool calls through the SDK client`, async () => {
        got.mcp = await mcpHandshake(exe, root, manifest.version);
        expect(got.mcp === got.cli, `the server's snapshot ${got.mcp} differs from the CLI's ${got.cli}`);
      });
      ids.set(target, got);
    }
    await check("linux-x64 and linux-arm64 give the same snapshot id and a byte-identical bundle", () => {
      const [a, b] = [ids.get("linux-x64"), ids.get("linux-arm64")];
      expect(a && b && a.cli !== "" && a.cli === b.cli, `ids ${a?.cli} and ${b?.cli}`);
      expect(a.bundle === b.bundle, `bundles ${a.bundle} and ${b.bundle}`);
    });

    for (const target of TARGET_NAMES.filter((t) => TARGETS[t].os === "darwin")) {
      const spec = TARGETS[target];
      const bytes = readBinary(join(releaseDir, manifest.targets[target].file));
      await check(`${target}: Mach-O ${spec.cpu} executable, bundle embedded, code signature valid over every page`, () => {
        const report = checkMachO(bytes, spec.cpu as "x64" | "arm64");
        expect(report.size === manifest.targets[target].size, "size differs from release.json");
        expect(report.size > 50e6 && report.size < 200e6, `size ${report.size}`);
        expect(report.bunSegment > 500e3, `__BUN holds only ${report.bunSegment} bytes`);
        expect(indexOf(bytes, `"${manifest.commit}"`) > 0, "the build's commit is not in the bundle");
        expect(indexOf(bytes, `not built for ${target}: macOS executables use the TypeScript paths`) > 0, "the native note is not in the bundle");
        expect(indexOf(bytes, "snapshot_create") > 0, "the tools are not in the bundle");
        // the TypeScript paths' workers (hashing, the grep index's background build) are entry points of their own
        for (const entry of ["$bunfs/root/repo/hash-worker.js", "$bunfs/root/repo/trigram-index/build-worker.js", "$bunfs/root/repo/verified-read-worker.js"]) {
          expect(indexOf(bytes, entry) > 0, `${entry} is not in the bundle`);
        }
      });
      await check(`${target}: the checks bite (a flipped byte in the bundle or the header fails the signature)`, () => {
        const bun = indexOf(bytes, "snapshot_create");
        for (const at of [bun, 100]) {
          let failed = false;
          try {
            checkMachO(tampered(bytes, at), spec.cpu as "x64" | "arm64");
          } catch {
            failed = true;
          }
          expect(failed, `a flipped byte at ${at} went unnoticed`);
        }
      });
    }

    await check("the ad-hoc signer reproduces Bun's own darwin-arm64 signature byte for byte", () => {
      const bytes = readBinary(join(releaseDir, manifest.targets["darwin-arm64"].file));
      expect(manifest.targets["darwin-arm64"].signature === "ad hoc, as Bun wrote it", `darwin-arm64 was ${manifest.targets["darwin-arm64"].signature}`);
      const again = signAdHoc(bytes, codeDirectoryIdentifier(bytes));
      expect(Buffer.from(again).equals(Buffer.from(bytes)), "macho-sign.ts writes another signature than Bun does");
    });

    await npmEndToEnd(releaseDir, manifest, check, work);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
  const failed = results.filter((r) => !r.ok);
  console.log(`\n${results.length - failed.length} passed, ${failed.length} failed`);
  if (failed.length > 0) throw new Error(`release smoke tests failed: ${failed.map((f) => f.name).join("; ")}`);
}

if (import.meta.main) {
  try {
    await runSmoke(join(ROOT, "dist", "release"));
  } catch (err) {
    console.error(err instanceof Error ? err.message : String(err));
    process.exit(1);
  }
}
