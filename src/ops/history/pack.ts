/**
 * History packs: the objects of one tool call (checkpoints, their metadata,
 * diffs, bytes after) in one file, `packs/{conv}/{name}.pack`, instead of one
 * file each. A 500-file patch records 1,500 objects; as single files that is
 * 1,500 creations and renames (and on a file system that is slow to create
 * files, most of the call's time), as a pack it is one.
 *
 * Objects keep their spec names (`diffs/{conv}/{edit_id}.diff`,
 * `checkpoints/{conv}/{name}.chkpt`): log entries name them as before, and
 * the store resolves a name through the conversation's packs when there is
 * no single file of that name.
 *
 * Format: a fixed 21-byte header `WSPACK1 ` + the index length as 12 decimal
 * digits + `\n`, then the index, a JSON object `{"objects":[[name, offset,
 * length], ...]}`, then `\n`, then the objects' bytes back to back (offsets
 * count from the first of them). A pack is written whole (temp file, flush,
 * rename), so a reader sees all of it or none, and it never changes after.
 */
import { closeSync, constants, fchmodSync, openSync, readSync, rmSync } from "node:fs";
import { writeAllPieces } from "../../repo/file-chunks";
import { internal } from "../../core/errors";
import { shownStatePath } from "../../repo/state-dir";
import { processUmask } from "../../repo/umask";
import type { ObjectWrite } from "./batch-store";

const MAGIC = "WSPACK1 ";
const HEADER_BYTES = MAGIC.length + 12 + 1;

export interface PackIndex {
  /** Byte offset of the first object's bytes in the file. */
  dataStart: number;
  objects: Map<string, { offset: number; length: number }>;
}

/**
 * Writes a new pack file (it must not exist) holding `items` in their order,
 * with exactly `perm` as its permission bits. Returns its size once written:
 * not yet durable, or with `sync`, durable (the file opened O_SYNC, its mode
 * set before the write, so one `writev` on an I/O thread writes and flushes
 * it with nothing more asked of the JavaScript thread). The file is opened
 * and the write issued before this returns; an open that fails throws here,
 * a write that fails removes the file and rejects.
 */
export function writePackFile(path: string, items: ObjectWrite[], perm = 0o644, opts: { sync?: boolean } = {}): Promise<number> {
  const { pieces, size } = packPieces(items);
  const fd = openSync(path, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | (opts.sync ? constants.O_SYNC : 0), perm);
  const written = (async () => {
    // open()'s mode passes through the umask: only when it clears bits of `perm` are they set again (a change of
    // mode waits for the file system's journal, which the other writes of a recorded write keep busy: 4 ms seen)
    if ((perm & processUmask()) !== 0) fchmodSync(fd, perm);
    await writeAllPieces(fd, pieces);
  })();
  return written.then(
    () => {
      closeSync(fd);
      return size;
    },
    (err: unknown) => {
      closeSync(fd);
      rmSync(path, { force: true });
      throw err;
    },
  );
}

/** A pack's bytes as pieces (header, index, then each object's bytes as given), and their total size. */
export function packPieces(items: ObjectWrite[]): { pieces: Uint8Array[]; size: number } {
  const entries: [string, number, number][] = [];
  let offset = 0;
  for (const it of items) {
    entries.push([it.rel, offset, it.bytes.length]);
    offset += it.bytes.length;
  }
  const index = new TextEncoder().encode(`${JSON.stringify({ objects: entries })}\n`);
  const header = new TextEncoder().encode(`${MAGIC}${String(index.length - 1).padStart(12, "0")}\n`);
  return { pieces: [header, index, ...items.map((it) => it.bytes)], size: header.length + index.length + offset };
}

/** Reads a pack's index (not its objects). */
export function readPackIndex(file: string): PackIndex {
  const fd = openSync(file, "r");
  try {
    const header = readExactly(fd, 0, HEADER_BYTES, file);
    const text = new TextDecoder().decode(header);
    const length = Number(text.slice(MAGIC.length, MAGIC.length + 12));
    if (!text.startsWith(MAGIC) || !Number.isInteger(length) || text[HEADER_BYTES - 1] !== "\n") throw damaged(file, "its header is not a pack header");
    let parsed: { objects?: unknown };
    try {
      parsed = JSON.parse(new TextDecoder().decode(readExactly(fd, HEADER_BYTES, length, file))) as { objects?: unknown };
    } catch {
      throw damaged(file, "its index is not JSON");
    }
    if (!Array.isArray(parsed.objects)) throw damaged(file, "its index lists no objects");
    const objects = new Map<string, { offset: number; length: number }>();
    for (const e of parsed.objects as unknown[]) {
      if (!Array.isArray(e) || typeof e[0] !== "string" || !Number.isInteger(e[1]) || !Number.isInteger(e[2])) throw damaged(file, "an index entry is malformed");
      objects.set(e[0], { offset: e[1], length: e[2] });
    }
    return { dataStart: HEADER_BYTES + length + 1, objects };
  } finally {
    closeSync(fd);
  }
}

/** One object's bytes from a pack. */
export function readPackedObject(file: string, index: PackIndex, name: string): Uint8Array | null {
  const at = index.objects.get(name);
  if (!at) return null;
  const fd = openSync(file, "r");
  try {
    return readExactly(fd, index.dataStart + at.offset, at.length, file);
  } finally {
    closeSync(fd);
  }
}

function readExactly(fd: number, position: number, length: number, file: string): Uint8Array {
  const out = new Uint8Array(length);
  let done = 0;
  while (done < length) {
    const n = readSync(fd, out, done, length - done, position + done);
    if (n === 0) throw damaged(file, "it ends early");
    done += n;
  }
  return out;
}

function damaged(file: string, why: string) {
  const pack = shownStatePath(file);
  return internal(`history pack ${pack} is damaged: ${why}`, { pack });
}
