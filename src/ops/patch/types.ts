/**
 * The patch engine's data model. Hunk text is kept as "byte strings": one JS
 * char per byte (latin1 view of the UTF-8 patch text and of the file bytes),
 * so every comparison is byte-exact and CRLF, invalid UTF-8 and NUL survive.
 * See byte-string.ts for the conversions.
 */
import type { FileMode } from "../../core/file-mode";
import type { RepoPath } from "../../core/repo-path";
import type { LineChange } from "../../core/line-change";
import type { BinaryPatch } from "./binary-patch";

export interface HunkLine {
  kind: " " | "-" | "+";
  /** Byte string, without the line terminator. A CRLF line keeps its "\r". */
  text: string;
  /** False when the line is followed by "\ No newline at end of file". */
  eol: boolean;
}

export interface PatchHunk {
  /**
   * 0-based, unique per path across the whole patch: when several file patches
   * touch the same path, their hunks are numbered on from the previous ones.
   */
  index: number;
  /** As stated in the header; with zero old lines, the line after which to insert. */
  oldStart: number;
  /** Counted from the body (a header that disagrees is recounted, with a warning). */
  oldLines: number;
  newStart: number;
  newLines: number;
  lines: HunkLine[];
  /** The "@@ ... @@" header line as written, decoded as UTF-8, for messages. */
  header: string;
  /** Where a parsed hunk's body lies in its patch (the native apply reads it there, without `lines`). */
  body?: HunkBody;
}

/** A patch as its UTF-8 bytes and the start of each line (lineStarts), the lines the parser reads. */
export interface PatchSource {
  bytes: Uint8Array;
  starts: Uint32Array;
}

/** A hunk's body: lines [from, to) of the patch, after its "@@" header. */
export interface HunkBody {
  patch: PatchSource;
  from: number;
  to: number;
}

export interface FilePatch {
  /** null = /dev/null (the file is created). */
  oldPath: RepoPath | null;
  /** null = /dev/null (the file is deleted). */
  newPath: RepoPath | null;
  oldMode?: FileMode;
  newMode?: FileMode;
  rename: boolean;
  /** git "copy from/to": newPath is created from oldPath's content, oldPath stays. */
  copy?: boolean;
  binary: boolean;
  /** A binary patch's data and object ids (`GIT binary patch`); absent for `Binary files ... differ`. */
  binaryPatch?: BinaryPatch;
  hunks: PatchHunk[];
}

export type RejectReason =
  | "context_mismatch"
  | "file_not_found"
  | "file_exists"
  | "binary_patch_unsupported"
  | "malformed";

/** A few lines of the current file, decoded for display; `line` is the 1-based number of text[0]. */
export interface LineExcerpt {
  line: number;
  text: string[];
}

export interface HunkReject {
  index: number;
  reason: RejectReason;
  message: string;
  /** The current text at the hunk's stated location. */
  expected_at?: LineExcerpt;
  /** Where the most old-side lines of the hunk match, in order. */
  closest?: LineExcerpt;
}

export interface FileReject {
  path: string;
  hunks: HunkReject[];
}

/** Where a hunk applied, relative to its stated line (only hunks that moved are reported). */
export interface HunkOffset {
  index: number;
  offset: number;
}

export type ApplyResult =
  | {
      ok: true;
      bytes: Uint8Array;
      offsets: HunkOffset[];
      /** The hunks' line changes as placed, in order: what turned the old lines into the new ones. */
      lines: LineChange[];
    }
  | { ok: false; rejects: HunkReject[] };

