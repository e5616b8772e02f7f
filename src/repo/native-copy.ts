/**
 * A compiled executable carries the native module inside it, and the runtime
 * loads it by writing it out to the temporary directory first. Where that
 * directory may not hold executable code (a `/tmp` mounted noexec, as
 * hardened servers and CI images have it, or read-only in a container), the
 * load fails and every caller would take the slower TypeScript paths. This
 * loads the same embedded bytes from a copy in a directory of the user's own
 * instead: `$XDG_RUNTIME_DIR/worksnap`, then `~/.cache/worksnap`. The copy is
 * named by its content's hash, written whole before it is renamed into place
 * (concurrent processes share it), and its bytes are checked before loading.
 */
import { chmodSync, closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { homedir } from "node:os";
import { join } from "node:path";
import { randomId128, sha256Hex } from "../core/hash";

export interface EmbeddedCopy {
  exports: unknown;
  /** The directory the copy was loaded from, as `--version` names it. */
  dir: string;
}

/** The embedded module loaded from a copy in a directory of the user's, or why it could not be. */
export function loadEmbeddedCopy(): EmbeddedCopy | string {
  const bytes = embeddedModule();
  if (bytes === null) return "no embedded module to copy";
  const name = `worksnap-${sha256Hex(bytes).slice(0, 16)}.node`;
  const failures: string[] = [];
  for (const dir of copyDirs()) {
    try {
      const path = placeCopy(dir, name, bytes);
      const mod = { exports: {} as unknown };
      process.dlopen(mod, path);
      return { exports: mod.exports, dir };
    } catch (err) {
      failures.push(`${dir}: ${err instanceof Error ? err.message.split("\n")[0] : String(err)}`);
    }
  }
  return failures.length > 0 ? failures.join("; ") : "no directory of the user's to copy it into";
}

/** The module's bytes as the executable embeds them (Bun names it worksnap-<hash>.node), or null outside one. */
function embeddedModule(): Uint8Array | null {
  const files = (typeof Bun !== "undefined" ? Bun.embeddedFiles : []) as (Blob & { name?: string })[];
  const embedded = files.find((f) => typeof f.name === "string" && /^worksnap(-[0-9a-z]+)?\.node$/.test(f.name));
  if (embedded?.name === undefined) return null;
  try {
    return readFileSync(`/$bunfs/root/${embedded.name}`);
  } catch {
    return null;
  }
}

function copyDirs(): string[] {
  const dirs: string[] = [];
  const runtime = process.env.XDG_RUNTIME_DIR;
  if (runtime && runtime.startsWith("/")) dirs.push(join(runtime, "worksnap"));
  let home = "";
  try {
    home = homedir();
  } catch {
    // no home directory
  }
  if (home.startsWith("/")) dirs.push(join(home, ".cache", "worksnap"));
  return dirs;
}

/** `dir/name` holding exactly `bytes`: the copy there if it does, else a new one written whole and renamed over it. */
function placeCopy(dir: string, name: string, bytes: Uint8Array): string {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const path = join(dir, name);
  if (existsSync(path) && sameBytes(readFileSync(path), bytes)) return path;
  const tmp = join(dir, `.${name}.${process.pid}-${randomId128().slice(0, 8)}`);
  try {
    const fd = openSync(tmp, "wx", 0o500);
    try {
      for (let off = 0; off < bytes.length; ) off += writeSync(fd, bytes, off, bytes.length - off);
    } finally {
      closeSync(fd);
    }
    chmodSync(tmp, 0o500);
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  }
  return path;
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.compare(a, b) === 0;
}
