/**
 * The edit history on disk, in spec 002 section 3's layout under
 * `.mcp/edit_history/`. Every file is written by the one atomic write (temp in
 * `.mcp/tmp`, flush, rename, flush the directory), so a reader sees a whole
 * old or a whole new file, never a torn one, except a log's appends (spec 2.2
 * step 7): their lines are written at the end of the log and flushed, and a
 * reader takes a log up to its last "\n" (store.ts parseLog), so a line being
 * written, or cut short by a crash, is not read; the next append cuts such a
 * line off, and the write intent still names its entries. The objects of one
 * tool call are written as one batch (putObjects): a batch of PACK_MIN_OBJECTS
 * or more objects of one conversation becomes one pack file
 * (`packs/{conv}/{id}.pack`, pack.ts) whose objects keep their names; a
 * smaller one is written as single files (all temp files first, one flush for
 * all of them, then the renames and one flush of their directories).
 */
import { existsSync, mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync } from "node:fs";
import { dirname, join } from "node:path";
import { compareUtf8 } from "../../core/byte-order";
import { internal, notFound } from "../../core/errors";
import { randomId128 } from "../../core/hash";
import { appendLines } from "../../repo/append-lines";
import { writeFileAtomic, writeFileUnflushed } from "../../repo/atomic-write";
import { DurableBatch } from "../../repo/durable";
import { caseKey } from "../../repo/name-case";
import { ensureStateDir, shownStatePath, tempPath } from "../../repo/state-dir";
import type { BatchingHistoryStore, ObjectWrite, PendingPack } from "./batch-store";
import { withFileLocks } from "./locks";
import { type PackIndex, readPackIndex, readPackedObject, writePackFile } from "./pack";
import {
  byTimestamp,
  checkConversationId,
  checkObjectRel,
  checkReviewId,
  logRel,
  parseLog,
  parseReview,
  parseWriteIntent,
  serializeLog,
  type HistoryStore,
} from "./store";
import type { LogEntry, ReviewRecord, WriteIntent } from "./types";

export const HISTORY_DIR = "edit_history";
/** A batch of at least this many objects of one conversation is written as one pack file. */
export const PACK_MIN_OBJECTS = 16;

interface Packed {
  file: string;
  index: PackIndex;
}

export class FsHistoryStore implements HistoryStore, BatchingHistoryStore {
  readonly root: string;
  readonly location: string;
  /** Last text read or written per log, so an append does not re-read the file it just wrote. */
  private readonly logText = new Map<string, { version: string; text: string }>();
  /** Pack indexes (packs never change once written), and per conversation its packed objects by name. */
  private readonly packIndexes = new Map<string, PackIndex>();
  private readonly packedByConv = new Map<string, { listing: string; byName: Map<string, Packed> }>();

  constructor(private readonly stateDir: string) {
    this.root = join(stateDir, HISTORY_DIR);
    this.location = this.root;
  }

  private abs(rel: string): string {
    return join(this.root, rel);
  }

  private write(rel: string, bytes: Uint8Array | string): void {
    ensureStateDir(this.stateDir);
    const target = this.abs(rel);
    mkdirSync(dirname(target), { recursive: true });
    writeFileAtomic(this.stateDir, target, typeof bytes === "string" ? new TextEncoder().encode(bytes) : bytes);
  }

  async listConversations(): Promise<string[]> {
    const dir = this.abs("logs");
    if (!existsSync(dir)) return [];
    return readdirSync(dir)
      .filter((n) => n.endsWith(".log"))
      .map((n) => n.slice(0, -4))
      .sort(compareUtf8);
  }

  async logVersion(conv: string): Promise<string | null> {
    try {
      const st = statSync(this.abs(logRel(conv)), { bigint: true });
      return `${st.ino}:${st.size}:${st.mtimeNs}`;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  /**
   * Every log's version (inode, size, mtime: a log is replaced by a rename or
   * grows by an append) and the names of reviews and intents (each written
   * once), hashed.
   */
  async changeStamp(): Promise<string> {
    const h = new Bun.CryptoHasher("sha256");
    for (const conv of await this.listConversations()) h.update(`${conv} ${(await this.logVersion(conv)) ?? "-"}\n`);
    for (const dir of ["reviews", "intents"]) {
      h.update(`${dir}\n`);
      let names: string[] = [];
      try {
        names = readdirSync(this.abs(dir)).filter((n) => n.endsWith(".json")).sort(compareUtf8);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      }
      for (const n of names) h.update(`${n}\n`);
    }
    return h.digest("hex");
  }

  private async readLogText(conv: string): Promise<string> {
    const version = await this.logVersion(conv);
    if (version === null) return "";
    const cached = this.logText.get(conv);
    if (cached && cached.version === version) return cached.text;
    const text = readFileSync(this.abs(logRel(conv)), "utf8");
    // The version is taken before the read: a concurrent rewrite makes the cache miss next time, never lie.
    this.logText.set(conv, { version, text });
    return text;
  }

  async readLog(conv: string): Promise<LogEntry[]> {
    return parseLog(await this.readLogText(conv), `${HISTORY_DIR}/${logRel(conv)}`);
  }

  private async replaceLog(conv: string, text: string): Promise<void> {
    this.write(logRel(conv), text);
    const version = await this.logVersion(conv);
    if (version) this.logText.set(conv, { version, text });
  }

  async writeLog(conv: string, entries: LogEntry[]): Promise<void> {
    await this.replaceLog(conv, serializeLog(entries));
  }

  /**
   * New lines at the end of the log, flushed (repo/append-lines.ts): a call costs its own lines, not the whole log.
   * A new log is written whole, as any other file. Under the conversation's log lock.
   */
  async appendLog(conv: string, entries: LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const text = serializeLog(entries);
    const before = await this.logVersion(conv);
    if (before === null) return this.replaceLog(conv, text);
    const cached = this.logText.get(conv);
    const { cut } = appendLines(this.abs(logRel(conv)), new TextEncoder().encode(text));
    const version = await this.logVersion(conv);
    if (version && cached?.version === before && cut === 0) this.logText.set(conv, { version, text: cached.text + text });
    else this.logText.delete(conv);
  }

  withLogLock<T>(conversationIds: string[], fn: () => Promise<T>): Promise<T> {
    const ids = [...new Set(conversationIds.map(checkConversationId))].sort(compareUtf8);
    return withFileLocks(
      ids.map((c) => this.abs(`locks/${c}`)),
      fn,
    );
  }

  async putObject(rel: string, bytes: Uint8Array): Promise<void> {
    this.write(checkObjectRel(rel), bytes);
  }

  /**
   * Many objects, durable together: every temp file is written, one flush
   * makes all of them durable, then each is renamed into place and the
   * directories they landed in are flushed once. Meant for new objects (the
   * recorder's names are fresh): on a reported failure, temp files and the
   * objects already renamed are removed again. A crash can leave some of them
   * in place, unreferenced (no log entry names them yet), as a crash during
   * single writes could.
   */
  async putObjects(items: ObjectWrite[]): Promise<void> {
    if (items.length === 0) return;
    const conv = items.length >= PACK_MIN_OBJECTS ? packConversation(items) : null;
    if (conv !== null) return this.putPack(conv, items);
    ensureStateDir(this.stateDir);
    const tmpDir = join(this.stateDir, "tmp");
    const batch = new DurableBatch(tmpDir);
    const staged: { tmp: string; target: string }[] = [];
    const placed: string[] = [];
    const dirs = new Set<string>();
    try {
      for (const it of items) {
        const target = this.abs(checkObjectRel(it.rel));
        const dir = dirname(target);
        if (!dirs.has(dir)) {
          mkdirSync(dir, { recursive: true });
          dirs.add(dir);
        }
        const tmp = tempPath(this.stateDir, target.slice(target.lastIndexOf("/") + 1));
        staged.push({ tmp, target });
        batch.writeFile(tmp, it.bytes, 0o644);
      }
      await batch.flush();
      for (let k = 0; k < staged.length; k++) {
        const { tmp, target } = staged[k]!;
        try {
          renameSync(tmp, target);
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
          // The history on another file system than .mcp/tmp: this object goes the single-file way (staged beside it).
          rmSync(tmp, { force: true });
          writeFileAtomic(this.stateDir, target, items[k]!.bytes);
        }
        placed.push(target);
      }
      await batch.syncDirs(dirs);
    } catch (err) {
      for (const { tmp } of staged) rmSync(tmp, { force: true });
      for (const target of placed) rmSync(target, { force: true });
      throw err;
    } finally {
      batch.close();
    }
  }

  /**
   * One pack file for the whole batch, durable like any single write: temp
   * file, flush, rename, flush of the directory (and of the directories
   * created for it).
   */
  private async putPack(conv: string, items: ObjectWrite[]): Promise<void> {
    ensureStateDir(this.stateDir);
    const name = `${randomId128().slice(0, 20)}.pack`;
    const tmp = tempPath(this.stateDir, name);
    const batch = new DurableBatch(join(this.stateDir, "tmp"));
    try {
      batch.add(tmp, await writePackFile(tmp, items));
      await batch.flush();
    } catch (err) {
      rmSync(tmp, { force: true });
      throw err;
    } finally {
      batch.close();
    }
    await this.placePack(conv, tmp, name);
  }

  /**
   * A pack of `items` started now: its temp file opened for synchronous writes (O_SYNC) and all of it handed to
   * one `writev` on an I/O thread, which returns once the bytes and the file are on the disk, with nothing more
   * asked of the JavaScript thread meanwhile (the items' own arrays are written, no copy). `finish` waits for it
   * and moves the pack into place durably; `discard` removes the temp file once the write is over. Null where
   * the batch would not be one pack: putObjects then.
   */
  startPack(items: ObjectWrite[]): PendingPack | null {
    const conv = items.length >= PACK_MIN_OBJECTS ? packConversation(items) : null;
    if (conv === null) return null;
    ensureStateDir(this.stateDir);
    const name = `${randomId128().slice(0, 20)}.pack`;
    const tmp = tempPath(this.stateDir, name);
    // a failure removes the temp file; an open that fails throws here (prepare then writes the checkpoints itself)
    const over = writePackFile(tmp, items, 0o644, { sync: true }).then(() => undefined);
    over.catch(() => undefined); // reported by finish
    let open = true;
    let discarded: Promise<void> | null = null;
    return {
      rels: items.map((it) => it.rel),
      finish: async () => {
        if (!open) throw internal("a history pack was finished after it was finished or discarded");
        open = false;
        await over; // a failure removed the temp file
        await this.placePack(conv, tmp, name);
      },
      discard: () => {
        if (discarded === null) {
          discarded = open
            ? over.then(
                () => rmSync(tmp, { force: true }),
                () => undefined,
              )
            : Promise.resolve();
          open = false;
        }
        return discarded;
      },
    };
  }

  /** A flushed pack moved from `.mcp/tmp` into `packs/{conv}/`, durably; on failure nothing of it stays. */
  private async placePack(conv: string, tmp: string, name: string): Promise<void> {
    const dir = this.abs(`packs/${conv}`);
    const target = join(dir, name);
    const dirs = new Set<string>([dir]);
    const batch = new DurableBatch(join(this.stateDir, "tmp"));
    let placed = false;
    try {
      const first = mkdirSync(dir, { recursive: true });
      if (first !== undefined) {
        // New directories: their entries in the directories above must be durable too.
        for (let d = dirname(dir); ; d = dirname(d)) {
          dirs.add(d);
          if (d === dirname(first) || d === dirname(d)) break;
        }
      }
      try {
        renameSync(tmp, target);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EXDEV") throw err;
        const bytes = new Uint8Array(readFileSync(tmp));
        rmSync(tmp, { force: true });
        writeFileAtomic(this.stateDir, target, bytes);
      }
      placed = true;
      await batch.syncDirs(dirs);
    } catch (err) {
      rmSync(tmp, { force: true });
      if (placed) rmSync(target, { force: true });
      throw err;
    } finally {
      batch.close();
      this.packedByConv.delete(conv);
    }
  }

  /** The packed objects of a conversation, by name (re-listed on every call: packs come and go with their batches). */
  private packed(conv: string): Map<string, Packed> {
    const dir = this.abs(`packs/${conv}`);
    let names: string[];
    try {
      names = readdirSync(dir).filter((n) => n.endsWith(".pack")).sort(compareUtf8);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return new Map();
      throw err;
    }
    const listing = names.join("/");
    const cached = this.packedByConv.get(conv);
    if (cached && cached.listing === listing) return cached.byName;
    const byName = new Map<string, Packed>();
    for (const n of names) {
      const file = join(dir, n);
      let index = this.packIndexes.get(file);
      if (!index) {
        index = readPackIndex(file);
        this.packIndexes.set(file, index);
      }
      for (const name of index.objects.keys()) byName.set(name, { file, index });
    }
    this.packedByConv.set(conv, { listing, byName });
    return byName;
  }

  private packedObject(rel: string): Packed | null {
    return this.packed(rel.split("/")[1]!).get(rel) ?? null;
  }

  /** Names of the objects in one object directory (`checkpoints/{conv}`), single files and packed, for many existence checks at once. */
  async objectNames(dir: string): Promise<Set<string>> {
    checkObjectRel(`${dir}/x`);
    let out: Set<string>;
    try {
      out = new Set(readdirSync(this.abs(dir)));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
      out = new Set();
    }
    const prefix = `${dir}/`;
    if (!dir.startsWith("reviews/")) for (const name of this.packed(dir.split("/")[1]!).keys()) if (name.startsWith(prefix)) out.add(name.slice(prefix.length));
    return out;
  }

  async getObject(rel: string): Promise<Uint8Array> {
    try {
      return new Uint8Array(readFileSync(this.abs(checkObjectRel(rel))));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    }
    const p = rel.startsWith("reviews/") ? null : this.packedObject(rel);
    const bytes = p ? readPackedObject(p.file, p.index, rel) : null;
    if (!bytes) throw notFound(`history object ${rel} is missing`, { object: rel });
    return bytes;
  }

  async hasObject(rel: string): Promise<boolean> {
    if (existsSync(this.abs(checkObjectRel(rel)))) return true;
    return !rel.startsWith("reviews/") && this.packedObject(rel) !== null;
  }

  async deleteObject(rel: string): Promise<void> {
    await this.deleteObjects([rel]);
  }

  /**
   * Removes objects; a packed object goes with its pack, so every object of
   * that pack must be in the list (a batch is removed whole, as on abort).
   */
  async deleteObjects(rels: string[]): Promise<void> {
    const packs = new Map<string, { index: PackIndex; names: Set<string>; conv: string }>();
    for (const rel of rels) {
      checkObjectRel(rel);
      if (rel.startsWith("reviews/")) continue;
      const p = this.packedObject(rel);
      if (!p) continue;
      const entry = packs.get(p.file) ?? { index: p.index, names: new Set<string>(), conv: rel.split("/")[1]! };
      entry.names.add(rel);
      packs.set(p.file, entry);
    }
    for (const [file, p] of packs) {
      const kept = [...p.index.objects.keys()].filter((n) => !p.names.has(n));
      if (kept.length > 0) throw internal(`history pack ${shownStatePath(file)} also holds ${kept[0]}; its objects are removed together`, { pack: shownStatePath(file), object: kept[0] });
    }
    for (const rel of rels) rmSync(this.abs(rel), { force: true });
    for (const [file, p] of packs) {
      rmSync(file, { force: true });
      this.packIndexes.delete(file);
      this.packedByConv.delete(p.conv);
    }
  }

  async removeConversation(conv: string): Promise<void> {
    checkConversationId(conv);
    // The log goes first: without it the conversation no longer exists, whatever else a crash leaves behind.
    rmSync(this.abs(logRel(conv)), { force: true });
    this.logText.delete(conv);
    rmSync(this.abs(`diffs/${conv}`), { recursive: true, force: true });
    rmSync(this.abs(`checkpoints/${conv}`), { recursive: true, force: true });
    rmSync(this.abs(`packs/${conv}`), { recursive: true, force: true });
    for (const file of this.packIndexes.keys()) if (file.startsWith(this.abs(`packs/${conv}/`))) this.packIndexes.delete(file);
    this.packedByConv.delete(conv);
  }

  /**
   * The records of a directory. A review that finishes while another process
   * lists them removes its record between the listing and the read: such a
   * record is over, and is left out rather than failing the reader.
   */
  private listRecords<T extends { timestamp: string }>(dir: string, parse: (text: string, where: string) => T): T[] {
    const abs = this.abs(dir);
    if (!existsSync(abs)) return [];
    const out: T[] = [];
    for (const n of readdirSync(abs)) {
      if (!n.endsWith(".json")) continue;
      let text: string;
      try {
        text = readFileSync(join(abs, n), "utf8");
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === "ENOENT") continue;
        throw err;
      }
      out.push(parse(text, `${HISTORY_DIR}/${dir}/${n}`));
    }
    return out.sort(byTimestamp);
  }

  async listReviews(): Promise<ReviewRecord[]> {
    return this.listRecords("reviews", parseReview);
  }

  async putReview(record: ReviewRecord): Promise<void> {
    this.write(`reviews/${checkReviewId(record.review_id)}.json`, `${JSON.stringify(record, null, 1)}\n`);
  }

  async deleteReview(reviewId: string): Promise<void> {
    checkReviewId(reviewId);
    rmSync(this.abs(`reviews/${reviewId}.json`), { force: true });
    rmSync(this.abs(`reviews/${reviewId}`), { recursive: true, force: true });
  }

  async listIntents(): Promise<ReviewRecord[]> {
    return this.listRecords("intents", parseReview);
  }

  async putIntent(record: ReviewRecord): Promise<void> {
    this.write(`intents/${checkReviewId(record.review_id)}.json`, `${JSON.stringify(record, null, 1)}\n`);
  }

  async deleteIntent(reviewId: string): Promise<void> {
    rmSync(this.abs(`intents/${checkReviewId(reviewId)}.json`), { force: true });
  }

  async listWriteIntents(): Promise<WriteIntent[]> {
    return this.listRecords("pending_writes", parseWriteIntent);
  }

  async putWriteIntent(intent: WriteIntent): Promise<void> {
    this.write(`pending_writes/${checkReviewId(intent.intent_id)}.json`, `${JSON.stringify(intent)}\n`);
  }

  async deleteWriteIntent(intentId: string): Promise<void> {
    rmSync(this.abs(`pending_writes/${checkReviewId(intentId)}.json`), { force: true });
  }

  async readClock(): Promise<string | null> {
    try {
      return readFileSync(this.abs("clock"), "utf8").trim() || null;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === "ENOENT") return null;
      throw err;
    }
  }

  /**
   * Renamed into place but not fsynced: it only guards the order against the system clock stepping back, and
   * after a power loss the timestamps in the (fsynced) logs are still ordered; this saves two fsyncs per edit.
   */
  async writeClock(timestamp: string): Promise<void> {
    ensureStateDir(this.stateDir);
    mkdirSync(this.root, { recursive: true });
    writeFileUnflushed(this.stateDir, this.abs("clock"), `${timestamp}\n`);
  }
}

/** The one conversation all objects of a batch belong to (diffs and checkpoints only, names unique), or null. */
function packConversation(items: ObjectWrite[]): string | null {
  let conv: string | null = null;
  const seen = new Set<string>();
  for (const it of items) {
    const parts = checkObjectRel(it.rel).split("/");
    if (parts[0] === "reviews" || (conv !== null && parts[1] !== conv) || seen.has(it.rel)) return null;
    conv = parts[1]!;
    seen.add(it.rel);
  }
  return conv;
}

/**
 * Where names fold case (macOS's default file system), the conversation whose log `conv` would share: one named
 * the same but for case (`conv_A` for `conv_a`), whose log file and checkpoints are the same files there; null
 * when there is none. Two conversations must not share them: each takes its own log lock, and their appends
 * would race on one file.
 */
export function conversationNamedOtherwise(stateDir: string, conv: string): string | null {
  let names: string[];
  try {
    names = readdirSync(join(stateDir, HISTORY_DIR, "logs"));
  } catch {
    return null; // no conversation yet
  }
  const key = caseKey(`${conv}.log`);
  const other = names.find((n) => n !== `${conv}.log` && n.endsWith(".log") && caseKey(n) === key);
  return other === undefined ? null : other.slice(0, -4);
}
