/**
 * Plans a whole multi-file patch against any tree (the work tree, a snapshot,
 * a replayed history state) without writing anything: the caller commits the
 * plan through its own write path. All or nothing (DESIGN decision 10): one
 * reject anywhere makes the plan `ok: false`, and every reject of every file
 * is reported, not just the first. Bad patch content never throws; it becomes
 * rejects. Only a failing `target.read` or a programming error throws.
 *
 * Several file patches for the same path in one patch are applied in order,
 * each against the content the previous ones left (create then edit, edit
 * twice, rename then edit, delete then create). git apply refuses such
 * patches; we accept them because models split edits of one file into several
 * sections and edit-history replay concatenates patches, and the in-order
 * meaning is the only one that makes sense. Hunk indexes keep counting across
 * those sections, so every hunk of a path has its own index. Once a section
 * for a path is rejected, later sections touching that path are not checked
 * (their result would depend on the rejected one); a warning says so.
 *
 * The plan is the net change against the target: a file created and deleted
 * again is no change, a rename followed by edits is one `rename` with the
 * final bytes. A `rename` change means: write `path`, remove `from`.
 */
import type { FileMode } from "../../core/file-mode";
import { compareUtf8 } from "../../core/byte-order";
import type { RepoPath } from "../../core/repo-path";
import type { LineChange } from "../../core/line-change";
import { applyHunks, applyHunksMany } from "./apply";
import { applyBinaryPatch } from "./binary-patch";
import { parsePatch } from "./parse";
import type { ApplyResult, FilePatch, FileReject, HunkReject, PatchHunk } from "./types";

export interface PatchTarget {
  read(path: RepoPath): Promise<{ bytes: Uint8Array; mode: FileMode } | null>;
  /** read for many paths at once (by path), where the target can do it for less; the first failure rejects. */
  readMany?(paths: RepoPath[]): Promise<Map<string, { bytes: Uint8Array; mode: FileMode } | null>>;
  /**
   * Whether two different paths the patch names, once read, are one file (a
   * case-folding file system finds `Bar.txt` as `BAR.txt`): a rename between
   * them changes the spelling of its name, and is not onto an existing file.
   */
  sameFile?(a: RepoPath, b: RepoPath): boolean;
}

export interface PlannedChange {
  path: RepoPath;
  kind: "create" | "modify" | "delete" | "rename";
  from?: RepoPath;
  /** null for delete. */
  bytes: Uint8Array | null;
  mode: FileMode;
  /**
   * A modification made by one section of the patch on the file as it was:
   * the line changes that turned its bytes into `bytes` (the edit history
   * renders its diff from them instead of diffing the whole file again).
   */
  lines?: LineChange[];
}

export interface PlannedOffset {
  path: string;
  index: number;
  offset: number;
}

export type PatchPlan =
  | { ok: true; changes: PlannedChange[]; offsets: PlannedOffset[]; warnings: string[] }
  | { ok: false; rejects: FileReject[]; warnings: string[] };

type Content = { bytes: Uint8Array; mode: FileMode } | null;

const EMPTY = new Uint8Array(0);
const READ_CONCURRENCY = 32;

/** `text`: the patch, or its bytes as a patch file holds them (parsePatch). */
export async function planPatch(text: string | Uint8Array, target: PatchTarget): Promise<PatchPlan> {
  const parsed = parsePatch(text);
  const original = await readAll(parsed.files, target);
  const planner = new Planner(original, parsed.warnings, applyAhead(parsed.files, original), target.sameFile);
  // A malformed hunk does not stop the rest of its file from being checked: more rejects, fewer retries.
  for (const r of parsed.rejects) for (const h of r.hunks) planner.reject(r.path, h, false);
  for (const file of parsed.files) planner.apply(file);
  return planner.result();
}

async function readAll(files: FilePatch[], target: PatchTarget): Promise<Map<string, Content>> {
  const paths = new Set<RepoPath>();
  for (const f of files) {
    if (f.oldPath) paths.add(f.oldPath);
    if (f.newPath) paths.add(f.newPath);
  }
  const queue = [...paths];
  if (target.readMany) return target.readMany(queue);
  const out = new Map<string, Content>();
  const worker = async () => {
    for (let p = queue.pop(); p !== undefined; p = queue.pop()) out.set(p, await target.read(p));
  };
  await Promise.all(Array.from({ length: Math.min(READ_CONCURRENCY, queue.length) }, worker));
  return out;
}

/** A file's hunks applied ahead to the bytes it had before the patch (applyAhead). */
type Ahead = Map<FilePatch, { source: Uint8Array; result: ApplyResult }>;

/**
 * The hunks of every section whose paths no other section names, applied to the files as they were read, all at
 * once (applyHunksMany: on every core, each file's old and new bytes hashed beside). The planner takes a result
 * from here when it meets the section with exactly those bytes, which it always does: nothing before it in the
 * patch changed them.
 */
function applyAhead(files: FilePatch[], original: Map<string, Content>): Ahead {
  const named = new Map<string, number>();
  for (const f of files) for (const p of new Set([f.oldPath, f.newPath])) if (p !== null) named.set(p, (named.get(p) ?? 0) + 1);
  const todo: { file: FilePatch; bytes: Uint8Array; hunks: PatchHunk[] }[] = [];
  for (const f of files) {
    const source = f.oldPath === null ? null : original.get(f.oldPath);
    if (f.binary || !source || f.hunks.length === 0 || named.get(f.oldPath!) !== 1 || (f.newPath !== null && named.get(f.newPath) !== 1)) continue;
    todo.push({ file: f, bytes: source.bytes, hunks: f.hunks });
  }
  const ahead: Ahead = new Map();
  if (todo.length < 2) return ahead;
  const results = applyHunksMany(todo);
  for (let k = 0; k < todo.length; k++) ahead.set(todo[k]!.file, { source: todo[k]!.bytes, result: results[k]! });
  return ahead;
}

class Planner {
  private readonly current = new Map<string, Content>();
  private readonly renamedFrom = new Map<string, RepoPath>();
  private readonly rejected = new Set<string>();
  private readonly rejects = new Map<string, HunkReject[]>();
  private readonly offsets: PlannedOffset[] = [];
  private readonly nextIndex = new Map<string, number>();
  /** Per path, the line changes from its original content, when one in-place section made its current content. */
  private readonly lines = new Map<string, LineChange[]>();

  constructor(
    private readonly original: Map<string, Content>,
    private readonly warnings: string[],
    private readonly ahead: Ahead = new Map(),
    private readonly sameFile?: (a: RepoPath, b: RepoPath) => boolean,
  ) {}

  reject(path: string, hunk: HunkReject, stopsLaterSections = true): void {
    const list = this.rejects.get(path) ?? [];
    list.push(hunk);
    this.rejects.set(path, list);
    if (stopsLaterSections) this.rejected.add(path);
  }

  private content(path: string): Content {
    return this.current.has(path) ? this.current.get(path)! : (this.original.get(path) ?? null);
  }

  apply(file: FilePatch): void {
    const subject = file.oldPath ?? file.newPath!;
    const index = file.hunks[0]?.index ?? this.nextIndex.get(subject) ?? 0;
    const last = file.hunks[file.hunks.length - 1];
    if (last) this.nextIndex.set(subject, last.index + 1);
    const touched = [file.oldPath, file.newPath].filter((p): p is RepoPath => p !== null);
    if (touched.some((p) => this.rejected.has(p))) {
      this.warnings.push(`${subject}: a later section of the patch for this path was not checked, because an earlier one was rejected`);
      return;
    }
    const failures: [string, HunkReject][] = [];
    const fail = (path: string, reason: HunkReject["reason"], message: string) =>
      failures.push([path, { index, reason, message }]);

    if (file.binary && !file.binaryPatch) {
      this.reject(subject, {
        index,
        reason: "binary_patch_unsupported",
        message: `${subject}: the patch says only that this binary file differs, not its bytes; make the patch with \`git diff --binary\` (or \`worksnap snapshot diff --binary\`), or write the file's content instead`,
      });
      for (const p of touched) this.rejected.add(p);
      return;
    }
    const source = file.oldPath === null ? ({ bytes: EMPTY, mode: file.newMode ?? "100644" } as const) : this.content(file.oldPath);
    if (file.oldPath !== null && source === null) {
      const why =
        file.newPath === null ? "so it cannot be deleted"
        : file.rename && file.newPath !== file.oldPath ? "so it cannot be renamed"
        : file.copy && file.newPath !== file.oldPath ? "so it cannot be copied"
        : 'to create it, use "--- /dev/null"';
      fail(file.oldPath, "file_not_found", `${file.oldPath} does not exist; ${why}`);
    }
    const moving = file.oldPath === null || ((file.rename || file.copy === true) && file.newPath !== file.oldPath);
    // renamed to another spelling of its own name: the target's content is the source's, and goes with it
    if (moving && file.rename && file.oldPath !== null && file.newPath !== null && !this.current.has(file.newPath) && this.sameFile?.(file.oldPath, file.newPath)) {
      this.original.set(file.newPath, null);
    }
    if (file.newPath !== null && moving && this.content(file.newPath) !== null) {
      const verb = file.oldPath === null ? "created" : file.rename ? "the target of a rename" : "the target of a copy";
      const alias = this.sameFile ? [...this.original.keys()].find((p) => p !== file.newPath && this.sameFile!(p as RepoPath, file.newPath!)) : undefined;
      fail(
        file.newPath,
        "file_exists",
        alias === undefined
          ? `${file.newPath} already exists, so it cannot be ${verb}; patch it as a modification instead`
          : `${file.newPath} already exists: this file system does not tell names apart by case, and it is ${alias}, so it cannot be ${verb}; to change the case of ${alias}'s name, rename it (rename from/rename to)`,
      );
    }
    let bytes: Uint8Array | undefined;
    let lineChanges: LineChange[] | undefined;
    if (source && failures.length === 0 && file.binaryPatch) {
      const outcome = applyBinaryPatch(subject, file.binaryPatch, source.bytes, file.oldPath === null);
      if (outcome.ok) bytes = outcome.bytes;
      else fail(subject, outcome.reason, outcome.message);
    } else if (source && failures.length === 0) {
      const early = this.ahead.get(file);
      const result = early && early.source === source.bytes ? early.result : applyHunks(source.bytes, file.hunks);
      if (!result.ok) for (const r of result.rejects) failures.push([subject, r]);
      else {
        bytes = result.bytes;
        lineChanges = result.lines;
        for (const o of result.offsets) this.offsets.push({ path: subject, ...o });
        if (file.newPath === null && bytes.length > 0 && file.hunks.length > 0) {
          failures.push([subject, { index: last!.index, reason: "context_mismatch", message: deletionLeftover(subject, bytes) }]);
        }
      }
    }
    if (failures.length > 0 || !source || bytes === undefined) {
      for (const [path, r] of failures) this.reject(path, r);
      for (const p of touched) this.rejected.add(p);
      return;
    }
    if (file.oldPath !== null && file.oldMode && file.oldMode !== source.mode) {
      this.warnings.push(`${file.oldPath}: the patch expects mode ${file.oldMode} but the file has mode ${source.mode}`);
    }
    if (file.newPath !== null) {
      const inPlace = file.oldPath === file.newPath && !this.current.has(file.oldPath);
      if (inPlace && lineChanges) this.lines.set(file.newPath, lineChanges);
      else this.lines.delete(file.newPath);
    }
    this.commit(file, { bytes, mode: file.newMode ?? source.mode });
  }

  private commit(file: FilePatch, result: { bytes: Uint8Array; mode: FileMode }): void {
    const { oldPath, newPath } = file;
    if (newPath === null) {
      this.current.set(oldPath!, null);
      this.renamedFrom.delete(oldPath!);
      return;
    }
    this.current.set(newPath, result);
    if (oldPath === null || oldPath === newPath) return;
    if (file.rename) {
      this.renamedFrom.set(newPath, this.renamedFrom.get(oldPath) ?? oldPath);
      this.renamedFrom.delete(oldPath);
      this.current.set(oldPath, null);
    } else this.renamedFrom.delete(newPath);
  }

  result(): PatchPlan {
    if (this.rejects.size > 0) {
      const rejects = [...this.rejects.entries()]
        .sort(([a], [b]) => compareUtf8(a, b))
        .map(([path, hunks]) => ({ path, hunks: hunks.sort((x, y) => x.index - y.index) }));
      return { ok: false, rejects, warnings: this.warnings };
    }
    return { ok: true, changes: this.changes(), offsets: this.sortedOffsets(), warnings: this.warnings };
  }

  private changes(): PlannedChange[] {
    const changes: PlannedChange[] = [];
    const movedAway = new Set<string>();
    const renamed = new Set<string>();
    for (const [path, fin] of this.current) {
      const from = this.renamedFrom.get(path);
      if (fin && from && this.original.get(path) == null && this.original.get(from) && this.content(from) === null) {
        changes.push({ path: path as RepoPath, kind: "rename", from, bytes: fin.bytes, mode: fin.mode });
        movedAway.add(from);
        renamed.add(path);
      }
    }
    for (const [path, fin] of this.current) {
      if (movedAway.has(path) || renamed.has(path)) continue;
      const orig = this.original.get(path) ?? null;
      const p = path as RepoPath;
      if (!orig && fin) changes.push({ path: p, kind: "create", bytes: fin.bytes, mode: fin.mode });
      else if (orig && !fin) changes.push({ path: p, kind: "delete", bytes: null, mode: orig.mode });
      else if (orig && fin && (orig.mode !== fin.mode || !sameBytes(orig.bytes, fin.bytes))) {
        changes.push({ path: p, kind: "modify", bytes: fin.bytes, mode: fin.mode, lines: this.lines.get(p) });
      }
    }
    return changes.sort((a, b) => compareUtf8(a.path, b.path));
  }

  private sortedOffsets(): PlannedOffset[] {
    return this.offsets.sort((a, b) => compareUtf8(a.path, b.path) || a.index - b.index);
  }
}

function sameBytes(a: Uint8Array, b: Uint8Array): boolean {
  return a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(b);
}

function deletionLeftover(path: string, rest: Uint8Array): string {
  let lines = 0;
  for (let i = rest.indexOf(10); i >= 0; i = rest.indexOf(10, i + 1)) lines++;
  if (rest[rest.length - 1] !== 10) lines++;
  return `the patch deletes ${path}, but its hunks do not cover the whole file: ${lines} line(s) would remain, so the file differs from what the patch expects`;
}
