import { closeSync, lstatSync, statSync, type Stats } from "node:fs";
import { encodeContent, isBinary } from "../../core/binary";
import { invalidArgument, notFound, permissionDenied, tooLarge, type WorksnapError } from "../../core/errors";
import { blobIdFromHex, blobIdOf, type BlobId } from "../../core/hash";
import { isWithin, parseRepoPath, refuseReserved, type RepoPath } from "../../core/repo-path";
import { READ_FLAGS, fdStream, isSpecialFileError, openRegular, readAll } from "../../repo/file-chunks";
import { STREAM_THRESHOLD } from "../../repo/hash-files";
import { touch, type PartialRead } from "../live/leases";
import { type LineSlice, jsonCost, shrinkSlice, sliceLines, sliceLinesFromStream } from "./line-slice";
import { resolveInRoot } from "../live/path-guard";
import { type BranchFields, type ModeArgs, type ReadContext, branchFields, openReadContext } from "../live/read-context";
import { kindOf, notRegularFile } from "./unreadable";
import type { Workspace } from "../workspace";

export interface FileArgs extends ModeArgs {
  path: string;
  start_line?: number;
  end_line?: number;
  /** What one answer may carry (FILE_INLINE_CAP); not a tool argument: the CLI, which prints raw bytes, allows more. */
  maxContent?: number;
  /**
   * Told, in worktree mode, which file's content the answer shows: the
   * resolved path and the blob of the whole file as read (a caller's pins);
   * not when only part of a large file was read (its blob is not known). The
   * content is then kept in the blob store (up to KEEP_SHOWN_MAX), so a later
   * refusal can show what changed since.
   */
  onShown?: (shown: ShownFile) => void;
}

/** A file whose content an answer showed: where it is (symlinks resolved) and the blob it had. */
export interface ShownFile {
  path: string;
  blob: BlobId;
}

/** Content kept for a later diff up to this size (a refusal's diff of a larger file would not fit an answer anyway). */
export const KEEP_SHOWN_MAX = 1 << 20;

/**
 * Keeps content a caller pins (what an answer showed, or a write wrote) in the
 * blob store, content-addressed like a capture's blobs, so a later stale-read
 * refusal can diff from it. `blob` must be the id of `bytes`.
 *
 * Best effort: a copy that cannot be kept (a full disk) only means a later
 * refusal shows the pinned and current ids without the diff between them. It
 * never fails the answer: after a write the files are already published and
 * recorded, and an error there would report a write that happened as refused.
 */
export async function keepShown(ws: Workspace, blob: BlobId, bytes: Uint8Array): Promise<void> {
  try {
    if (bytes.length <= KEEP_SHOWN_MAX && !(await ws.blobs.has(blob))) ws.blobs.loose.writeKnown(blob, bytes);
  } catch {
    // not kept: see above
  }
}

/** How long after a write's answer what it wrote is kept, unless something needs it sooner (shownKept). */
export const KEEP_AFTER_MS = 100;

interface Keeping {
  queued: { blob: BlobId; bytes: Uint8Array }[];
  running: Promise<void>;
  timer: ReturnType<typeof setTimeout> | null;
}

const keeping = new WeakMap<Workspace, Keeping>();

/**
 * keepShown for what a write wrote, once its answer has gone: a 500-file write kept its files one after the other
 * before answering (a lookup in the store and a blob written each, 15 ms of a server's first write in a profile).
 * They are kept KEEP_AFTER_MS later, in the time a model takes to read the answer, or at once when a stale-read
 * refusal needs them first (shownKept): nothing is shown differently. Best effort as keepShown is: a process
 * that exits before then keeps nothing, and a later refusal says it has no diff.
 */
export function keepShownAfter(ws: Workspace, items: { blob: BlobId; bytes: Uint8Array }[]): void {
  if (items.length === 0) return;
  let k = keeping.get(ws);
  if (!k) keeping.set(ws, (k = { queued: [], running: Promise.resolve(), timer: null }));
  k.queued.push(...items);
  if (k.timer === null) {
    k.timer = setTimeout(() => void shownKept(ws), KEEP_AFTER_MS);
    k.timer.unref?.();
  }
}

/** Keeps now whatever keepShownAfter queued; resolves once everything queued so far is kept (or given up). */
export function shownKept(ws: Workspace): Promise<void> {
  const k = keeping.get(ws);
  if (!k) return Promise.resolve();
  if (k.timer !== null) {
    clearTimeout(k.timer);
    k.timer = null;
  }
  const items = k.queued.splice(0);
  if (items.length > 0) {
    k.running = k.running.then(async () => {
      for (const it of items) await keepShown(ws, it.blob, it.bytes);
    });
  }
  return k.running;
}

export type FileResult = BranchFields & {
  path: string;
  /**
   * The file's blob id, when it is known without reading more than the
   * answer needs: always in snapshot mode and for a whole file; for a line
   * range of a work tree file over WHOLE_READ_MAX, only when the store
   * already knows it (a clean tracked file) or the range reached the end.
   */
  blob?: BlobId;
  size: number;
  encoding: "utf8" | "base64";
  content: string;
  type: "file" | "symlink";
  start_line?: number;
  end_line?: number;
  total_lines?: number;
  truncated: boolean;
  /** Set when a symlink inside the root was followed to read its target. */
  resolved_path?: string;
};

/**
 * What one answer carries of a file: the content's length as a JSON string
 * (line-slice.ts jsonCost; base64 counts its characters), so that an answer
 * always fits the MCP adapter's limit on a response with room to spare.
 * A whole file over it is TOO_LARGE naming the end_line that fits; a range is
 * cut at a line boundary with truncated: true.
 */
export const FILE_INLINE_CAP = 64 * 1024;
/**
 * A line range of a file up to this size reads it whole: a few milliseconds,
 * and the answer gets its blob id and total_lines. A larger file is read
 * only as far as the range needs.
 */
export const WHOLE_READ_MAX = STREAM_THRESHOLD;

/** Where the bytes of the file come from: a blob of a snapshot, or an open work tree file. */
interface Source {
  size: number;
  type: "file" | "symlink";
  /** The blob id when known without reading (snapshot entry, clean tracked file the store knows). */
  knownBlob?: BlobId;
  resolvedPath?: string;
  /** Where the content is: the path with every symlink resolved (a work tree file), as the write path names it. */
  shownPath: string;
  whole(): Promise<Uint8Array>;
  stream(): Promise<ReadableStream<Uint8Array>>;
  /** Releases what the source holds (an open descriptor) if it was not read to the end. */
  close(): void;
}

/** snapshot_file: a file's content, whole or as a line range. */
export async function readFile(ws: Workspace, args: FileArgs): Promise<FileResult> {
  const path = parseRepoPath(args.path, "path");
  refuseReserved(path);
  const range = parseRange(args.start_line, args.end_line);
  const ctx = await openReadContext(ws, args, [path]);
  const src = ctx.mode === "snapshot" ? await snapshotSource(ws, ctx, path) : worktreeSource(ws, ctx, path);
  try {
    return await answer(ws, ctx, path, range, src, args.maxContent ?? FILE_INLINE_CAP, args.onShown);
  } finally {
    src.close();
  }
}

async function answer(
  ws: Workspace,
  ctx: ReadContext,
  path: RepoPath,
  range: { start: number; end: number } | null,
  src: Source,
  cap: number,
  onShown: FileArgs["onShown"],
): Promise<FileResult> {
  let slice: LineSlice | null = null;
  let bytes: Uint8Array | null = null;
  let blob = src.knownBlob;
  /** what the lease records when the whole file's blob is not known */
  let partial: PartialRead | null = null;
  if (range && src.size > WHOLE_READ_MAX) {
    const streamed = await sliceLinesFromStream(await src.stream(), range.start, range.end, cap, blob === undefined);
    slice = streamed;
    if (blob === undefined && streamed.readSha256 !== undefined) {
      // read to the end: what was read is the whole file
      if (streamed.totalLines !== undefined) blob = blobIdFromHex(streamed.readSha256);
      else partial = { bytes: streamed.readBytes, sha256: streamed.readSha256 };
    }
  } else if (range) {
    bytes = await src.whole();
    slice = sliceLines(bytes, range.start, range.end, cap);
    blob ??= blobIdOf(bytes);
  } else {
    if (src.size > cap) throw tooLargeError(path, src.size, cap, await sliceLinesFromStream(await src.stream(), 1, Number.MAX_SAFE_INTEGER, cap));
    bytes = await src.whole();
    if (contentCost(bytes) > cap) throw tooLargeError(path, src.size, cap, sliceLines(bytes, 1, Number.MAX_SAFE_INTEGER, cap));
    blob ??= blobIdOf(bytes);
  }
  if (slice?.totalLines !== undefined && range && range.start > Math.max(slice.totalLines, 1)) {
    throw invalidArgument(`start_line ${range.start} is past the end of ${path}, which has ${slice.totalLines} line${slice.totalLines === 1 ? "" : "s"}`, {
      arg: "start_line",
      path,
      total_lines: slice.totalLines,
    });
  }
  if (ctx.mode === "worktree") {
    if (blob !== undefined) touch(ctx.lease, path, blob);
    else if (partial) ctx.lease.touched.setPartial(path, partial);
    if (blob !== undefined && onShown) {
      // bytes read whole are that blob (or the store knows it already: a clean tracked file)
      if (bytes !== null) await keepShown(ws, blob, bytes);
      onShown({ path: src.shownPath, blob });
    }
  }
  if (slice && isBinary(slice.bytes)) throw invalidArgument(`${path} is binary; line ranges apply to text files only`, { path });
  let enc = encodeContent(slice ? slice.bytes : (bytes as Uint8Array));
  if (slice && enc.content.length > cap) {
    // text that is not UTF-8 goes out as base64, a third longer than its bytes: fewer lines fit
    slice = shrinkSlice(slice, Math.floor(((cap - 16) * 3) / 4));
    enc = encodeContent(slice.bytes);
  }
  const result: FileResult = {
    ...branchFields(ctx),
    path,
    size: src.size,
    type: src.type,
    encoding: enc.encoding,
    content: enc.content,
    truncated: slice?.cut ?? false,
  };
  if (blob !== undefined) result.blob = blob;
  if (slice) {
    result.start_line = slice.startLine;
    result.end_line = slice.endLine;
    if (slice.totalLines !== undefined) result.total_lines = slice.totalLines;
  }
  if (src.resolvedPath !== undefined) result.resolved_path = src.resolvedPath;
  return result;
}

async function snapshotSource(ws: Workspace, ctx: Extract<ReadContext, { mode: "snapshot" }>, path: RepoPath): Promise<Source> {
  const entry = ctx.snapshot.entries.find((e) => e.path === path);
  if (!entry) {
    if (ctx.snapshot.entries.some((e) => isWithin(e.path, path))) throw invalidArgument(`${path} is a directory; use snapshot_list`, { path });
    throw notFound(`${path} is not in snapshot ${ctx.snapshotId}`, { path, snapshot_id: ctx.snapshotId });
  }
  return {
    size: (await ws.blobs.size(entry.blob)) ?? 0,
    type: entry.mode === "120000" ? "symlink" : "file",
    knownBlob: entry.blob,
    shownPath: path,
    whole: () => ws.blobs.read(entry.blob),
    stream: () => ws.blobs.stream(entry.blob),
    close: () => undefined,
  };
}

/**
 * A work tree file, opened once: a FIFO, socket or device is refused at once
 * without being opened for reading (and the open itself never waits on a
 * FIFO: READ_FLAGS), so snapshot_file answers immediately whatever sits
 * at the path.
 */
function worktreeSource(ws: Workspace, ctx: Extract<ReadContext, { mode: "worktree" }>, path: RepoPath): Source {
  const target = resolveInRoot(ws.repo, path);
  if (!target.exists) throw notFound(`${path} does not exist in the work tree`, { path });
  let st: Stats;
  try {
    st = statSync(target.abs);
  } catch (err) {
    throw readError(path, err);
  }
  if (st.isDirectory()) throw invalidArgument(`${path} is a directory; use snapshot_list`, { path });
  const kind = kindOf(st);
  if (kind !== null) throw notRegularFile(path, kind);
  let opened: { fd: number; stat: Stats };
  try {
    // target.abs is canonical: a symlink there now was put there since, and is not followed
    opened = openRegular(target.abs, READ_FLAGS);
  } catch (err) {
    throw readError(path, err);
  }
  const symlink = lstatSync(`${ws.repo.root}/${path}`, { throwIfNoEntry: false })?.isSymbolicLink() === true;
  let fd: number | null = opened.fd;
  const take = () => {
    if (fd === null) throw invalidArgument(`${path} was already read`, { path });
    const f = fd;
    fd = null;
    return f;
  };
  return {
    size: opened.stat.size,
    type: "file",
    knownBlob: symlink ? undefined : indexBlob(ws, ctx, path),
    resolvedPath: symlink ? target.resolved : undefined,
    shownPath: target.resolved,
    whole: async () => {
      const f = take();
      try {
        return readAll(f, opened.stat.size);
      } finally {
        closeSync(f);
      }
    },
    stream: async () => fdStream(take()),
    close: () => {
      if (fd !== null) closeSync(fd);
      fd = null;
    },
  };
}

/**
 * The blob of a clean tracked file whose sha256 the store knows: git vouches
 * that the file holds its index blob at the state the lease names (a change
 * since moves the fingerprint), as grep's lease records rely on.
 */
function indexBlob(ws: Workspace, ctx: Extract<ReadContext, { mode: "worktree" }>, path: RepoPath): BlobId | undefined {
  const entry = ctx.live.entries.find((e) => e.path === path);
  const known = entry?.gitOid ? ws.blobs.gitMap.get(entry.gitOid) : undefined;
  return known ? blobIdFromHex(known.sha256) : undefined;
}

/** A read failure as the tool answers it, naming the repo path (never the machine's). */
function readError(path: string, err: unknown): unknown {
  const code = (err as NodeJS.ErrnoException | null)?.code;
  if (code === "EACCES" || code === "EPERM") return permissionDenied(`cannot read ${path}: permission denied`, { path });
  if (isSpecialFileError(err)) return notRegularFile(path, "FIFO, socket or device");
  if (code === "ENOENT" || code === "ENOTDIR" || code === "ELOOP" || code === "EISDIR") return notFound(`${path} does not exist in the work tree (it changed while being read)`, { path });
  return err;
}

/** What the file's content takes in an answer: its JSON string length as text, or its base64 form's. */
function contentCost(bytes: Uint8Array): number {
  const enc = encodeContent(bytes);
  return enc.encoding === "utf8" ? jsonCost(bytes) : enc.content.length;
}

/**
 * TOO_LARGE for a whole read of a file over FILE_INLINE_CAP, saying which
 * end_line fits in one answer: `head` is the slice from line 1 within the
 * cap (read from the first bytes only).
 */
function tooLargeError(path: string, size: number, cap: number, head: LineSlice): WorksnapError {
  const fits = Math.max(1, head.endLine);
  const longFirst = head.bytes.length > 0 && head.bytes[head.bytes.length - 1] !== 10; // line 1 alone is over the limit
  return tooLarge(
    `${path} is ${size} bytes, more than one answer holds (${cap} characters of content); read it in parts with start_line/end_line: ` +
      (longFirst ? "its first line alone is longer than that (start_line 1, end_line 1 returns its start)" : `start_line 1, end_line ${fits} fits`),
    { path, size, limit: cap, fits_end_line: fits },
  );
}

function parseRange(start: number | undefined, end: number | undefined): { start: number; end: number } | null {
  if (start === undefined && end === undefined) return null;
  const s = start ?? 1;
  const e = end ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isInteger(s) || s < 1) throw invalidArgument("start_line must be an integer >= 1", { arg: "start_line" });
  if (!Number.isInteger(e) || e < s) throw invalidArgument("end_line must be an integer >= start_line", { arg: "end_line" });
  return { start: s, end: e };
}
