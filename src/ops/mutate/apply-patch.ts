import { decodeBase64Argument } from "../../core/binary";
import { invalidArgument, tooLarge } from "../../core/errors";
import { type PatchPlan, type PlannedChange, type PlannedOffset, planPatch } from "../patch/plan";
import type { FileReject, HunkReject } from "../patch/types";
import type { WriteChange } from "../write/write-path";
import type { PathState } from "../write/edit-recorder";
import type { RepoPath } from "../../core/repo-path";
import { type MutationArgs, type MutationResult, type TreeView, runMutation } from "./mutation";
import { staleReadWarning } from "./stale-reads";
import type { Workspace } from "../workspace";

export interface ApplyPatchArgs extends MutationArgs {
  /**
   * A unified diff, plain or git style, any number of files; or its bytes as
   * a patch file holds them (the CLI), which may carry lines of a file in an
   * encoding other than UTF-8 byte for byte. As text, `base64:` and standard
   * base64 gives those bytes too (as write_file's content does).
   */
  patch: string | Uint8Array;
}

export type ApplyPatchResult = MutationResult<{
  applied: boolean;
  rejects?: FileReject[];
  /** Files and hunks rejected in all (the list may be shortened to keep the answer small). */
  reject_counts?: { files: number; hunks: number };
  rejects_truncated?: boolean;
  offsets: PlannedOffset[];
  offsets_total: number;
  warnings: string[];
  warnings_total: number;
}>;

/** Largest patch accepted (characters of its text, or bytes). */
export const PATCH_MAX_CHARS = 512 * 1024 * 1024;
const OFFSETS_CAP = 200;
const WARNINGS_CAP = 50;
/** JSON bytes of reject detail (excerpts of current text) an answer carries before it keeps only reasons. */
const REJECT_DETAIL_BUDGET = 40_000;
/** JSON bytes of rejects in all before the list is cut. */
const REJECT_LIST_BUDGET = 60_000;

/**
 * workspace_apply_patch: all or nothing (DESIGN decision 10). The plan is made
 * against the current tree (under the work-tree lock in worktree mode) by the
 * patch engine, which writes nothing; a plan with any reject writes nothing
 * and the answer lists every reject, sorted by path then hunk index, each
 * context mismatch with the current text at the stated place and at the
 * closest partial match. A clean plan goes through the one write path (or
 * becomes a new snapshot). Symlinks are patched as links (their text, mode
 * 120000), the way git stores them.
 *
 * A patch over a file that changed since the caller saw it (its pins, without
 * a lease) is applied when its context still matches: the context proves the
 * lines it touches. The answer names each such file first among the warnings
 * and in stale_reads; staleWrites "refuse" refuses it instead.
 */
export async function applyPatchOp(ws: Workspace, args: ApplyPatchArgs): Promise<ApplyPatchResult> {
  if (typeof args.patch !== "string" && !(args.patch instanceof Uint8Array)) throw invalidArgument("patch must be a string", { arg: "patch" });
  if (args.patch.length > PATCH_MAX_CHARS) throw patchTooLarge(args.patch.length, typeof args.patch === "string" ? "characters" : "bytes");
  const patch = typeof args.patch === "string" && args.patch.startsWith("base64:") ? decodeBase64Argument(args.patch.slice(7), "patch", PATCH_MAX_CHARS, (n) => patchTooLarge(n, "bytes")) : args.patch;
  const r = await runMutation(ws, args, "edit_file_diff", async (view) => {
    // each path the patch names, as the tree found it (another spelling of a name where the file system folds case)
    const found = new Map<string, string>();
    const plan = await planPatch(patch, {
      read: (p) => readForPatch(view, p, found),
      ...(view.readMany ? { readMany: (ps) => readManyForPatch(view, ps, found) } : {}),
      sameFile: (a, b) => a !== b && found.get(a) !== undefined && found.get(a) === found.get(b),
    });
    return { changes: plan.ok ? plan.changes.map(toWriteChange) : null, extra: shapeAnswer(plan), fromReads: true };
  }, { showDiff: true, onStale: args.staleWrites === "refuse" ? "refuse" : "report" });
  const out = r.result;
  if (out.stale_reads && out.stale_reads.length > 0) {
    // the files that changed since they were read lead the warnings (the patch engine's follow)
    const stale = out.stale_reads.map(staleReadWarning);
    const more = (out.stale_reads_total ?? 0) - out.stale_reads.length;
    if (more > 0) stale.push(`${more} more files changed since this session read them; the patch was applied over them too`);
    out.warnings = [...stale, ...out.warnings];
    out.warnings_total += stale.length;
  }
  return out;
}

async function readForPatch(view: TreeView, path: RepoPath, found: Map<string, string>) {
  const t = await view.resolve(path, false);
  if (t.kind === "dir") throw notAFile(path);
  if (t.kind === "missing") return null;
  found.set(path, t.path);
  return view.read(t.path);
}

/** readForPatch for every path at once (the view's readMany); the first failure in the order readAll's reads fail is thrown. */
async function readManyForPatch(view: TreeView, paths: RepoPath[], found: Map<string, string>): Promise<Map<string, PathState>> {
  const read = await view.readMany!(paths);
  const out = new Map<string, PathState>();
  for (let k = read.length - 1; k >= 0; k--) {
    const r = read[k]!;
    if (r instanceof Error) throw r;
    if (r.target.kind === "dir") throw notAFile(paths[k]!);
    if (r.state instanceof Error) throw r.state;
    out.set(paths[k]!, r.target.kind === "missing" ? null : r.state);
    if (r.target.kind !== "missing") found.set(paths[k]!, r.target.path);
  }
  return out;
}

function patchTooLarge(size: number, unit: "characters" | "bytes") {
  return tooLarge(`the patch is ${size} ${unit}; at most ${PATCH_MAX_CHARS} are accepted in one call`, { arg: "patch", size, limit: PATCH_MAX_CHARS });
}

function notAFile(path: RepoPath) {
  // git apply takes a patch deleting a directory's files and creating a file in its place at once; here the file
  // comes in a second call, once the first has removed the emptied directory (docs/decisions.md)
  return invalidArgument(
    `the patch names ${path}, which is a directory, not a file; to put a file in a directory's place, delete the directory's files in one call (the emptied directory goes with them), then create the file in another`,
    { path, reason: "directory_in_the_way" },
  );
}

function toWriteChange(c: PlannedChange): WriteChange {
  switch (c.kind) {
    case "create":
      return { kind: "write", path: c.path, bytes: c.bytes!, mode: c.mode, expect: null };
    case "modify":
      return { kind: "write", path: c.path, bytes: c.bytes!, mode: c.mode, operation: "edit", lines: c.lines };
    case "delete":
      return { kind: "delete", path: c.path };
    case "rename":
      return { kind: "move", from: c.from!, path: c.path, bytes: c.bytes!, mode: c.mode };
  }
}

function shapeAnswer(plan: PatchPlan) {
  const warnings = plan.warnings.slice(0, WARNINGS_CAP).map((w) => (w.length > 400 ? `${w.slice(0, 400)}…` : w));
  if (!plan.ok) {
    const limited = limitRejects(plan.rejects);
    return {
      applied: false,
      rejects: limited.rejects,
      reject_counts: { files: plan.rejects.length, hunks: plan.rejects.reduce((n, f) => n + f.hunks.length, 0) },
      rejects_truncated: limited.truncated,
      offsets: [] as PlannedOffset[],
      offsets_total: 0,
      warnings,
      warnings_total: plan.warnings.length,
    };
  }
  return {
    applied: true,
    offsets: plan.offsets.slice(0, OFFSETS_CAP),
    offsets_total: plan.offsets.length,
    warnings,
    warnings_total: plan.warnings.length,
  };
}

/**
 * Keeps an answer with thousands of rejects small: hunks carry their excerpts
 * while the detail budget lasts, then only index, reason and message; past the
 * list budget the list stops (sorted order kept) and `rejects_truncated` says so.
 */
export function limitRejects(all: FileReject[]): { rejects: FileReject[]; truncated: boolean } {
  let detail = 0;
  let total = 0;
  const out: FileReject[] = [];
  for (const f of all) {
    const hunks: HunkReject[] = [];
    for (const h of f.hunks) {
      let kept: HunkReject = h;
      const full = JSON.stringify(h).length;
      if (detail + full > REJECT_DETAIL_BUDGET) kept = { index: h.index, reason: h.reason, message: h.message.slice(0, 300) };
      else detail += full;
      const size = JSON.stringify(kept).length + 1;
      if (total + size > REJECT_LIST_BUDGET) {
        if (hunks.length > 0) out.push({ path: f.path, hunks });
        return { rejects: out, truncated: true };
      }
      total += size;
      hunks.push(kept);
    }
    out.push({ path: f.path, hunks });
  }
  return { rejects: out, truncated: false };
}
