import { closeSync, constants, lstatSync, openSync, readFileSync, readSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { blobIdFromHex } from "../core/hash";
import { FsBlobStore } from "./fs-blob-store";

/** A file the capture has to read: its path, and the index blob id it should equal if clean. */
export interface HashItem {
  index: number;
  path: string;
  gitOid?: string;
  /** The index mode of a clean tracked file; such a file is read without a stat. */
  mode?: string;
}

export type HashOutcome =
  | { index: number; kind: "ok"; sha256: string; gitOid: string; mode: "100644" | "100755" | "120000"; size: number; mtimeMs: number; ctimeMs: number; ino: number; hashedAt: number }
  | { index: number; kind: "vanished" }
  | { index: number; kind: "large"; size: number }
  | { index: number; kind: "denied" };

/** Files above this are left to the streaming path (never loaded whole), which keeps peak memory low. */
export const STREAM_THRESHOLD = 8 * 1024 * 1024;

/**
 * Reads and hashes files: sha256 always, git's blob hash when an index blob id
 * is expected. Content that is not vouched for by git goes to the loose store
 * here, while the bytes are in hand. Runs inline or inside a hash worker.
 */
export function hashFiles(root: string, stateDir: string, items: HashItem[], onProgress?: (done: number) => void): HashOutcome[] {
  const loose = new FsBlobStore(stateDir);
  const out: HashOutcome[] = [];
  const reader = new FileReader();
  for (const item of items) {
    if (out.length % 1000 === 999) {
      onProgress?.(out.length + 1);
      // Hashers and hex strings are garbage at once; collecting as we go keeps peak memory flat.
      if (out.length % 4000 === 3999) Bun.gc(false);
    }
    const abs = join(root, item.path);
    try {
      if (item.gitOid && (item.mode === "100644" || item.mode === "100755")) {
        // A clean tracked file: git vouches for its type and mode, so read it straight into a reused buffer.
        const bytes = reader.read(abs);
        if (bytes === null) {
          out.push({ index: item.index, kind: "large", size: STREAM_THRESHOLD + 1 });
          continue;
        }
        const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
        const gitOid = gitBlobHash(item.gitOid, bytes);
        if (gitOid !== item.gitOid) loose.writeKnown(blobIdFromHex(sha256), bytes);
        out.push({ index: item.index, kind: "ok", sha256, gitOid, mode: item.mode, size: bytes.length, mtimeMs: 0, ctimeMs: 0, ino: 0, hashedAt: 0 });
        continue;
      }
      const st = lstatSync(abs);
      const mode = st.isSymbolicLink() ? "120000" : st.isFile() ? (st.mode & 0o111 ? "100755" : "100644") : null;
      if (mode === null) {
        out.push({ index: item.index, kind: "vanished" });
        continue;
      }
      if (mode !== "120000" && st.size > STREAM_THRESHOLD) {
        out.push({ index: item.index, kind: "large", size: st.size });
        continue;
      }
      const hashedAt = Date.now();
      const bytes: Uint8Array = mode === "120000" ? readlinkSync(abs, { encoding: "buffer" }) : readFileSync(abs);
      const sha256 = new Bun.CryptoHasher("sha256").update(bytes).digest("hex");
      const gitOid = item.gitOid ? gitBlobHash(item.gitOid, bytes) : "";
      if (gitOid !== item.gitOid || !item.gitOid) loose.writeKnown(blobIdFromHex(sha256), bytes);
      out.push({ index: item.index, kind: "ok", sha256, gitOid, mode, size: bytes.length, mtimeMs: st.mtimeMs, ctimeMs: st.ctimeMs, ino: st.ino, hashedAt });
    } catch (err) {
      const code = (err as NodeJS.ErrnoException).code;
      if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP") out.push({ index: item.index, kind: "vanished" });
      else if (code === "EACCES" || code === "EPERM") out.push({ index: item.index, kind: "denied" });
      else throw err;
    }
  }
  return out;
}

function gitBlobHash(like: string, bytes: Uint8Array): string {
  const h = new Bun.CryptoHasher(like.length === 64 ? "sha256" : "sha1");
  h.update(`blob ${bytes.length}\0`);
  h.update(bytes);
  return h.digest("hex");
}

/**
 * Reads whole files into one reused buffer: open, read until EOF, close; no
 * stat and no allocation per file. A file that does not fit under the
 * streaming threshold is reported as null and left to the streaming path.
 */
class FileReader {
  private buf = Buffer.allocUnsafe(1 << 20);

  read(abs: string): Uint8Array | null {
    const fd = openSync(abs, constants.O_RDONLY | constants.O_NOFOLLOW);
    try {
      let len = 0;
      for (;;) {
        if (len === this.buf.length) {
          if (this.buf.length > STREAM_THRESHOLD) return null;
          const bigger = Buffer.allocUnsafe(Math.min(this.buf.length * 2, STREAM_THRESHOLD + 1));
          this.buf.copy(bigger, 0, 0, len);
          this.buf = bigger;
        }
        const n = readSync(fd, this.buf, len, this.buf.length - len, null);
        if (n === 0) break;
        len += n;
      }
      return this.buf.subarray(0, len);
    } finally {
      closeSync(fd);
    }
  }
}
