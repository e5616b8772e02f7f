// The npm packages end to end: the packed tarballs, served by a loopback registry (registry.ts), installed
// into empty projects with npm and run with npx exactly as the README and MCP host configurations do. Nothing
// is fetched from anywhere else: the registry is the only one npm is given, and its log is checked.
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import type { ReleaseManifest } from "../release.ts";
import { HOST_TARGET, TARGET_NAMES, type Target } from "../targets.ts";
import { startRegistry } from "./registry.ts";
import { expect, mcpHandshake, run, runAsync, runnerFor, smallRepo, versionFields, type Check } from "./smoke-lib.ts";

export async function npmEndToEnd(releaseDir: string, manifest: ReleaseManifest, check: Check, work: string): Promise<void> {
  const registry = startRegistry(manifest.npm.map((n) => join(releaseDir, n.file)));
  const base = join(work, "npm");
  mkdirSync(base, { recursive: true });
  writeFileSync(join(base, "user-npmrc"), "");
  writeFileSync(join(base, "global-npmrc"), "");
  // npm and npx see only the loopback registry, a cache of their own, and no user or global configuration
  const env = {
    npm_config_registry: `${registry.url}/`,
    npm_config_cache: join(base, "cache"),
    npm_config_userconfig: join(base, "user-npmrc"),
    npm_config_globalconfig: join(base, "global-npmrc"),
    npm_config_audit: "false",
    npm_config_fund: "false",
    npm_config_update_notifier: "false",
    npm_config_loglevel: "error",
  };
  const project = (name: string) => {
    const dir = join(base, name);
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, "package.json"), `${JSON.stringify({ name: `smoke-${name}`, version: "1.0.0", private: true })}\n`);
    return dir;
  };
  const host = HOST_TARGET as Target;
  const direct = run([join(releaseDir, manifest.targets[host].file), "--version"]).stdout;
  const repo = smallRepo(join(base, "work"));
  try {
    await check("npx -y worksnap --version in an empty directory fetches worksnap and only this platform's package", async () => {
      const dir = join(base, "empty");
      mkdirSync(dir);
      const before = registry.requests.length;
      const r = await runAsync(["npx", "-y", "worksnap", "--version"], { cwd: dir, env });
      expect(r.code === 0, `exit ${r.code}: ${r.stderr}`);
      expect(r.stdout === direct, `npx printed:\n${r.stdout}\nthe executable:\n${direct}`);
      const fetched = registry.requests.slice(before).filter((p) => p.startsWith("/-/tarballs/"));
      const want = [`/-/tarballs/worksnap-${manifest.version}.tgz`, `/-/tarballs/worksnap-${host}-${manifest.version}.tgz`];
      expect(JSON.stringify([...fetched].sort()) === JSON.stringify(want.sort()), `tarballs fetched: ${fetched.join(", ")}`);
    });

    await check("npm install worksnap into an empty project: the launcher and the linux-x64 executable, nothing else", async () => {
      const dir = project("install");
      const r = await runAsync(["npm", "install", "--no-save", "worksnap"], { cwd: dir, env });
      expect(r.code === 0, `npm install: exit ${r.code}: ${r.stderr}`);
      for (const t of TARGET_NAMES) {
        const installed = existsSync(join(dir, "node_modules", "@worksnap", t, "bin", "worksnap"));
        expect(installed === (t === host), `@worksnap/${t} ${installed ? "installed" : "missing"}`);
      }
      const v = await runAsync(["npx", "worksnap", "--version"], { cwd: dir, env });
      expect(v.code === 0 && v.stdout === direct, `npx worksnap --version: ${v.stdout}${v.stderr}`);
      const m = await runAsync(["npx", "mcpdiff", "status", "--root", repo], { cwd: dir, env });
      expect(m.code === 0 && m.stdout.includes("no recorded edits"), `npx mcpdiff status: ${m.stdout}${m.stderr}`);
    });

    await check('an MCP host configured with "command": "npx", "args": ["-y", "worksnap", "serve"] gets a working server', async () => {
      const dir = join(base, "host");
      mkdirSync(dir);
      const cli = run([join(releaseDir, manifest.targets[host].file), "snapshot", "create", "--root", repo]).stdout.trim();
      const id = await mcpHandshake(["npx", "-y", "worksnap"], repo, manifest.version, { cwd: dir, env });
      expect(id === cli, `the server's snapshot ${id} differs from the executable's ${cli}`);
    });

    await check("npm install --cpu=arm64 picks @worksnap/linux-arm64, and its executable runs under qemu-user", async () => {
      const dir = project("arm64");
      const r = await runAsync(["npm", "install", "--no-save", "--cpu=arm64", "--os=linux", "worksnap"], { cwd: dir, env });
      expect(r.code === 0, `npm install: exit ${r.code}: ${r.stderr}`);
      for (const t of TARGET_NAMES) {
        const installed = existsSync(join(dir, "node_modules", "@worksnap", t, "bin", "worksnap"));
        expect(installed === (t === "linux-arm64"), `@worksnap/${t} ${installed ? "installed" : "missing"}`);
      }
      const v = run([...runnerFor("linux-arm64"), join(dir, "node_modules", "@worksnap", "linux-arm64", "bin", "worksnap"), "--version"]);
      expect(v.code === 0 && versionFields(v.stdout).target === "linux-arm64", `--version: ${v.stdout}${v.stderr}`);
    });

    await check("npm asked the loopback registry for worksnap's packages only", () => {
      const names = new Set(registry.requests.filter((p) => !p.startsWith("/-/tarballs/")).map((p) => p.slice(1)));
      const ours = new Set(["worksnap", ...TARGET_NAMES.map((t) => `@worksnap/${t}`)]);
      const other = [...names].filter((n) => !ours.has(n));
      expect(other.length === 0, `other requests: ${other.join(", ")}`);
    });
  } finally {
    registry.stop();
  }
}
