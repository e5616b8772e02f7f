import type { RepoPath } from "../../core/repo-path";

/** One file the walk offers; `open` yields all its bytes, or a stream of them for large files. */
export interface GrepCandidate {
  path: RepoPath;
  /**
   * Whether the path holds a UTF-16 unit of U+D800 or above, where the runtime's string order and UTF-8 byte order
   * can differ; a walk that knows says so, and the engine, which checks the walk's order, tests the path otherwise.
   */
  wide?: boolean;
  /** null: not known (only with `absPath`; the engine stats the file when it opens it) */
  size: number | null;
  open(): Promise<Uint8Array | ReadableStream<Uint8Array>>;
  /**
   * The regular file on disk holding exactly these bytes, when there is one
   * (a work tree file, a stored blob); never a symlink (it is opened with
   * O_NOFOLLOW, so one fails the search rather than being followed). When
   * set, the engine reads the file itself, on reader threads or straight
   * into its window buffer, and does not call open(). fileCandidate() sets it.
   */
  absPath?: string;
  /**
   * Asks the engine for the SHA-256 (hex) of the bytes it searched: called
   * once, in walk order, for each text file it searched (never for a binary
   * one), with the hash when the engine read the whole file itself; null when the path no
   * longer held a regular file by the time it was read (deleted, replaced by
   * a directory or a symlink), which is then searched as empty. Without
   * this, such a file fails the search. A file read by a regex child process
   * is not reported: the caller hashes it itself.
   */
  onRead?: (sha256: string | null | undefined) => void;
  /**
   * with onRead: the caller knows the file's hash, so the engine does not
   * hash it; onRead hears undefined for it, or null when it was gone. (A
   * file whose hash was wanted but not made, a search cut short inside a
   * large file, also reports undefined.)
   */
  hashKnown?: boolean;
  /**
   * Settled without reading, by the trigram index (index-select.ts): "binary", or "no-match" (its blob lacks a
   * trigram every match needs). The engine takes such a file as it would after reading it; `indexedSha256`
   * gives the hash to report to onRead when one is wanted.
   */
  indexed?: "binary" | "no-match";
  indexedSha256?: () => string;
  /**
   * With absPath: the file holds this candidate's bytes only if its SHA-256
   * (hex) is this one. The engine reads and hashes it (on reader threads),
   * and searches open() instead when the hash differs, the file is gone or
   * unreadable, or it is binary (a binary outcome carries no hash to check).
   * A stored snapshot's blob read from the work tree that still holds it.
   */
  expectSha256?: string;
  /**
   * Candidates with the same key hold the same bytes (a blob several paths
   * hold): the first one searched from its start is searched, and the others
   * take its outcome under their own path. `shares` is how many candidates of
   * the call carry the key, so the outcome is let go after the last.
   */
  share?: { key: string; shares: number };
}

export interface GrepMatch {
  path: string;
  /** 1-based */
  line: number;
  /** 1-based byte offset of the match in its line, like `rg --column` */
  col: number;
  /**
   * The line without its terminator (a `\r` before the `\n` is dropped too).
   * A line over 300 bytes is cut to about 200 bytes around the match, on
   * character boundaries, and `trimmed` says how many bytes were cut.
   */
  text: string;
  trimmed?: { before: number; after: number };
  /**
   * Up to contextLines lines before and after, same rules as `text`, except a
   * context line over 200 bytes is cut at the end and marked with "…". Only
   * the first match on a line carries context; later matches on the same line
   * would repeat it. Absent when there is no such line (start or end of file).
   */
  before?: string[];
  after?: string[];
}

export interface GrepResult {
  matches: GrepMatch[];
  /** text files searched in this call (binary ones excluded) */
  files_searched: number;
  /** of those, files with at least one match from this call's starting point */
  files_matched: number;
  binary_skipped: number;
  /** matches found in searched files but not returned because a cap was hit */
  matches_omitted: number;
  truncated: boolean;
  /** present iff more remains; pass it back unchanged with the same query */
  cursor?: string;
  /** every candidate searched, in walk order, binary excluded: the lease's touched set */
  searched_paths: string[];
  /**
   * The stretch of the walk this answer covers, by path: from `resumed_from` (the cursor's file; absent: the
   * start) up to, not including, `stopped_at` (where the next page resumes; absent: the end). A caller that
   * settles files without handing them to the engine counts those in the stretch (snapshot/grep.ts).
   */
  resumed_from?: string;
  stopped_at?: string;
  /**
   * candidates met in this call that could not be read (permission denied,
   * or a FIFO, socket or device where a file was listed), in walk order:
   * skipped, not searched and not touched
   */
  unreadable: string[];
  /** the time budget ran out; `cursor` resumes at the file being searched then */
  timed_out?: boolean;
  /** why the answer was cut short, for the model */
  note?: string;
}
