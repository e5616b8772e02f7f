// What `npm run release` needs beyond `npm ci`: a C compiler for this machine, Debian's cross compiler for
// linux-arm64 (gcc-aarch64-linux-gnu, which brings the arm64 C library qemu runs the executable with) and
// qemu-user-static for the arm64 smoke tests. Missing packages are installed with apt-get when the release
// runs as root on Debian (CI, a fresh machine); otherwise the release stops and names them.
import { existsSync } from "node:fs";

interface Need {
  what: string;
  present: () => boolean;
  debian: string;
}

export const ARM64_SYSROOT = "/usr/aarch64-linux-gnu";

const NEEDS: Need[] = [
  { what: "a C compiler (cc)", present: () => [process.env.CC, "cc", "gcc", "clang"].some((c) => c && Bun.which(c)), debian: "gcc" },
  { what: "aarch64-linux-gnu-gcc", present: () => Bun.which(process.env.CC_LINUX_ARM64 ?? "aarch64-linux-gnu-gcc") !== null, debian: "gcc-aarch64-linux-gnu" },
  { what: `the arm64 C library (${ARM64_SYSROOT})`, present: () => existsSync(`${ARM64_SYSROOT}/lib/ld-linux-aarch64.so.1`), debian: "libc6-arm64-cross" },
  { what: "qemu-aarch64-static", present: () => Bun.which("qemu-aarch64-static") !== null, debian: "qemu-user-static" },
  { what: "git", present: () => Bun.which("git") !== null, debian: "git" },
  { what: "sha256sum", present: () => Bun.which("sha256sum") !== null, debian: "coreutils" },
];

export function ensurePrereqs(opts: { install: boolean }): void {
  if (process.platform !== "linux" || process.arch !== "x64") {
    throw new Error(`releases are cut on linux-x64 (this is ${process.platform}-${process.arch}): the cross compiler and qemu set-up assume it`);
  }
  let missing = NEEDS.filter((n) => !n.present());
  if (missing.length === 0) return;
  const packages = [...new Set(missing.map((n) => n.debian))];
  const canInstall = opts.install && process.getuid?.() === 0 && Bun.which("apt-get") !== null;
  if (canInstall) {
    console.log(`installing ${packages.join(" ")} (apt-get)`);
    const env = { ...process.env, DEBIAN_FRONTEND: "noninteractive" };
    for (const cmd of [["apt-get", "update", "-qq"], ["apt-get", "install", "-y", "-qq", ...packages]]) {
      const r = Bun.spawnSync(cmd, { env, stdout: "ignore", stderr: "pipe" });
      if (r.exitCode !== 0) throw new Error(`${cmd.join(" ")} failed:\n${r.stderr.toString()}`);
    }
    missing = NEEDS.filter((n) => !n.present());
    if (missing.length === 0) return;
  }
  throw new Error(
    `missing: ${missing.map((n) => n.what).join(", ")}. On Debian: apt-get install ${packages.join(" ")}` +
      (opts.install ? "" : " (--no-install was given)"),
  );
}
