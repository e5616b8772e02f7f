"use strict";
// Finds the worksnap executable for this machine: the optional dependency @worksnap/<platform>-<arch> that npm
// installed beside this package (npm skips the others by their "os", "cpu" and "libc" fields).
const fs = require("node:fs");
const path = require("node:path");

const RELEASED = ["linux-x64", "linux-arm64", "darwin-x64", "darwin-arm64"];

const WINDOWS =
  "worksnap does not run on Windows: its writes rely on POSIX file operations (renameat2, openat2 with " +
  "RESOLVE_BENEATH, directory descriptors), file modes and symlinks. Run it inside WSL, where the linux-x64 " +
  "package installs.";

/** The package that carries the executable for a platform and architecture, or why there is none. */
function platformPackage(platform, arch) {
  if (platform === "win32") return { error: WINDOWS };
  const target = `${platform}-${arch}`;
  if (!RELEASED.includes(target)) {
    return { error: `worksnap has no executable for ${target}; it is released for ${RELEASED.join(", ")}.` };
  }
  return { name: `@worksnap/${target}`, target };
}

/** Whether this Linux runs musl libc (Alpine): the released Linux executables need glibc. */
function isMusl() {
  if (process.platform !== "linux") return false;
  try {
    const header = process.report.getReport().header;
    return !header.glibcVersionRuntime;
  } catch {
    return false;
  }
}

/**
 * The path of the executable to run, or an error message. WORKSNAP_BINARY names one explicitly (a local
 * build, or a binary downloaded from a release).
 */
function resolveBinary(options) {
  const o = options || {};
  const env = o.env || process.env;
  const platform = o.platform || process.platform;
  const arch = o.arch || process.arch;
  const resolve = o.resolve || require.resolve;
  if (env.WORKSNAP_BINARY) {
    if (fs.existsSync(env.WORKSNAP_BINARY)) return { path: env.WORKSNAP_BINARY };
    return { error: `WORKSNAP_BINARY is set to ${env.WORKSNAP_BINARY}, which does not exist.` };
  }
  const pkg = platformPackage(platform, arch);
  if (pkg.error) return { error: pkg.error };
  let dir;
  try {
    dir = path.dirname(resolve(`${pkg.name}/package.json`));
  } catch {
    if (platform === "linux" && (o.musl === undefined ? isMusl() : o.musl)) {
      return { error: `worksnap's Linux executables need glibc, and this system runs musl libc (Alpine?), so npm did not install ${pkg.name}. Use a glibc-based image (Debian, Ubuntu), or run it in one.` };
    }
    return {
      error:
        `the package ${pkg.name}, which carries worksnap's ${pkg.target} executable, is not installed. npm installs it ` +
        "as an optional dependency of worksnap; it is missing when optional dependencies are omitted (--omit=optional, " +
        "--no-optional) or when node_modules was installed on another platform. Reinstall worksnap on this machine, " +
        "or set WORKSNAP_BINARY to an executable from a release.",
    };
  }
  const binary = path.join(dir, "bin", "worksnap");
  if (!fs.existsSync(binary)) return { error: `${pkg.name} is installed but holds no bin/worksnap; reinstall worksnap.` };
  return { path: binary };
}

module.exports = { RELEASED, platformPackage, resolveBinary, isMusl };
