import { lstatSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import { blobIdFromHex } from "../core/hash";
import { FsBlobStore } from "./fs-blob-store";

/** A file the capture has to read: its path, and the index blob id it should equal if clean. */
export interface HashItem {
  index: number;
  path: string;
  gitOid?: string;
}

export type HashOutcome =
  | { index: number; kind: "ok"; sha256: string; gitOid: string; mode: "100644" | "100755" | "120000"; size: number; mtimeMs: number; ctimeMs: number; ino: number; hashedAt: number }
  | { index: number; kind: "vanished" }
  | { index: number; kind: "large"; size: number }
  | { index: number; kind: "denied" };

/** Files above this are left to the streaming path (never loaded whole). */
export const STREAM_THRESHOLD = 32 * 1024 * 1024;

/**
 * Reads and hashes files: sha256 always, git's blob hash when an index blob id
 * is expected. Content that is not vouched for by git goes to the loose store
 * here, while the bytes are in hand. Runs inline or inside a hash worker.
 */
export function hashFiles(root: string, stateDir: string, items: HashItem[], onProgress?: (done: number) => void): HashOutcome[] {
  const loose = new FsBlobStore(stateDir);
  const out: HashOutcome[] = [];
  for (const item of items) {
    if (onProgress && out.length % 1000 === 999) onProgress(out.length + 1);
    const abs = join(root, item.path);
    try {
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
      let gitOid = "";
      if (item.gitOid) {
        const h = new Bun.CryptoHasher(item.gitOid.length === 64 ? "sha256" : "sha1");
        h.update(`blob ${bytes.length}\0`);
        h.update(bytes);
        gitOid = h.digest("hex");
      }
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
