import { lstatSync, statSync } from "node:fs";
import { encodeContent, isBinary } from "../../core/binary";
import { invalidArgument, notFound, tooLarge } from "../../core/errors";
import { blobIdOf, type BlobId } from "../../core/hash";
import { isWithin, parseRepoPath } from "../../core/repo-path";
import { fileStream } from "../../repo/file-chunks";
import { touch } from "../live/leases";
import { type LineSlice, sliceLines, sliceLinesFromStream } from "./line-slice";
import { resolveInRoot } from "../live/path-guard";
import { type BranchFields, type ModeArgs, branchFields, openReadContext } from "../live/read-context";
import type { Workspace } from "../workspace";

export interface FileArgs extends ModeArgs {
  path: string;
  start_line?: number;
  end_line?: number;
  /**
   * Told, in worktree mode, which file's content the answer shows: the
   * resolved path and the blob of the whole file as read (a caller's pins).
   * The content is then kept in the blob store (up to KEEP_SHOWN_MAX), so a
   * later refusal can show what changed since.
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

export type FileResult = BranchFields & {
  path: string;
  blob: BlobId;
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

/** Content returned without a line range; above it, TOO_LARGE with a hint. */
export const FILE_INLINE_CAP = 256 * 1024;
/** Whole-buffer reads up to this size; larger files are streamed for ranges. */
const WHOLE_READ_MAX = 64 * 1024 * 1024;

/** snapshot_file: a file's content, whole or as a line range. */
export async function readFile(ws: Workspace, args: FileArgs): Promise<FileResult> {
  const path = parseRepoPath(args.path, "path");
  const range = parseRange(args.start_line, args.end_line);
  const ctx = await openReadContext(ws, args, [path]);
  let size: number;
  let type: "file" | "symlink" = "file";
  let resolvedPath: string | undefined;
  let whole: () => Promise<Uint8Array>;
  let stream: () => Promise<ReadableStream<Uint8Array>>;
  let knownBlob: BlobId | undefined;
  let shownPath: string = path;
  if (ctx.mode === "snapshot") {
    const entry = ctx.snapshot.entries.find((e) => e.path === path);
    if (!entry) {
      if (ctx.snapshot.entries.some((e) => isWithin(e.path, path))) throw invalidArgument(`${path} is a directory; use snapshot_list`, { path });
      throw notFound(`${path} is not in snapshot ${ctx.snapshotId}`, { path, snapshot_id: ctx.snapshotId });
    }
    knownBlob = entry.blob;
    if (entry.mode === "120000") type = "symlink";
    size = (await ws.blobs.size(entry.blob)) ?? 0;
    whole = () => ws.blobs.read(entry.blob);
    stream = () => ws.blobs.stream(entry.blob);
  } else {
    const target = resolveInRoot(ws.repo, path);
    if (!target.exists) throw notFound(`${path} does not exist in the work tree`, { path });
    shownPath = target.resolved;
    const st = statSync(target.abs);
    if (st.isDirectory()) throw invalidArgument(`${path} is a directory; use snapshot_list`, { path });
    if (lstatSync(`${ws.repo.root}/${path}`).isSymbolicLink()) resolvedPath = target.resolved;
    size = st.size;
    whole = async () => new Uint8Array(await Bun.file(target.abs).arrayBuffer());
    stream = async () => fileStream(target.abs);
  }
  let slice: LineSlice | null = null;
  let bytes: Uint8Array | null = null;
  if (range) {
    if (size > WHOLE_READ_MAX) slice = await sliceLinesFromStream(await stream(), range.start, range.end, FILE_INLINE_CAP);
    else {
      bytes = await whole();
      slice = sliceLines(bytes, range.start, range.end, FILE_INLINE_CAP);
    }
  } else {
    if (size > FILE_INLINE_CAP) {
      throw tooLarge(`${path} is ${size} bytes; read it in parts with start_line/end_line (up to ${FILE_INLINE_CAP} bytes per call)`, {
        path,
        size,
        limit: FILE_INLINE_CAP,
      });
    }
    bytes = await whole();
  }
  const blob = knownBlob ?? (bytes && !range ? blobIdOf(bytes) : await blobOfStream(await stream()));
  if (ctx.mode === "worktree") {
    touch(ctx.lease, path, blob);
    if (args.onShown) {
      // a range's blob comes from a second read: the bytes are kept only when they are that blob
      const keep = bytes !== null && bytes.length <= KEEP_SHOWN_MAX && (!range || blobIdOf(bytes) === blob);
      if (keep && !(await ws.blobs.has(blob))) ws.blobs.loose.writeKnown(blob, bytes as Uint8Array);
      args.onShown({ path: shownPath, blob });
    }
  }
  const body = slice ? slice.bytes : (bytes as Uint8Array);
  if (slice && isBinary(body)) throw invalidArgument(`${path} is binary; line ranges apply to text files only`, { path });
  const enc = encodeContent(body);
  const result: FileResult = {
    ...branchFields(ctx),
    path,
    blob,
    size,
    type,
    encoding: enc.encoding,
    content: enc.content,
    truncated: slice?.cut ?? false,
  };
  if (slice) {
    result.start_line = slice.startLine;
    result.end_line = slice.endLine;
    if (slice.totalLines !== undefined) result.total_lines = slice.totalLines;
  }
  if (resolvedPath !== undefined) result.resolved_path = resolvedPath;
  return result;
}

function parseRange(start: number | undefined, end: number | undefined): { start: number; end: number } | null {
  if (start === undefined && end === undefined) return null;
  const s = start ?? 1;
  const e = end ?? Number.MAX_SAFE_INTEGER;
  if (!Number.isInteger(s) || s < 1) throw invalidArgument("start_line must be an integer >= 1", { arg: "start_line" });
  if (!Number.isInteger(e) || e < s) throw invalidArgument("end_line must be an integer >= start_line", { arg: "end_line" });
  return { start: s, end: e };
}

async function blobOfStream(stream: ReadableStream<Uint8Array>): Promise<BlobId> {
  const h = new Bun.CryptoHasher("sha256");
  for await (const chunk of stream) h.update(chunk);
  return `sha256:${h.digest("hex")}`;
}
