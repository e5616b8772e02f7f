import { isBinary } from "../../core/binary";
import { compareUtf8 } from "../../core/byte-order";
import { WorksnapError } from "../../core/errors";
import type { BlobId } from "../../core/hash";
import type { PathState } from "../write/edit-recorder";
import type { StaleRead } from "../write/pin-check";
import type { AppliedChange } from "../write/write-path";
import type { Workspace } from "../workspace";
import { appliedDiff } from "./applied-diff";
import { keepShown, shownKept } from "../snapshot/file";

/**
 * A file that changed since the caller saw it (its pin), as an answer shows
 * it: the pinned and the current blob, and what changed between them as a
 * unified diff, so the model can merge its edit without reading the whole
 * file again. The diff needs the pinned content, which the blob store has
 * when a read kept it (snapshot_file keeps what it shows), when it is a
 * captured or committed blob, or a write's; otherwise it is left out.
 */
export interface StaleFile {
  path: string;
  /** The blob the caller last saw; null: it saw no file there. */
  pinned: BlobId | null;
  /** The blob on disk now; null: the file is gone. */
  current: BlobId | null;
  /** What changed from the pinned content to the current one (git-style unified diff); absent when the pinned content is not kept. */
  diff?: string;
  /** The diff shows the whole change in text: with the pinned content, it gives the current content exactly. */
  diff_complete: boolean;
}

/** Files a refusal or warning lists (the count of all is beside them). */
export const STALE_FILES_CAP = 20;
/** Diff text over all listed files; a file whose diff does not fit whole is cut at a hunk boundary. */
export const STALE_DIFF_CHARS = 4_000;
/** Pinned content over this size is not diffed (its change would not fit anyway). */
const PINNED_DIFF_MAX = 1 << 20;

export async function describeStaleReads(ws: Workspace, reads: StaleRead[]): Promise<StaleFile[]> {
  // what earlier writes left to keep after their answers is kept first: the pinned content may be among it
  await shownKept(ws);
  const sorted = [...reads].sort((a, b) => compareUtf8(a.path, b.path)).slice(0, STALE_FILES_CAP);
  let budget = STALE_DIFF_CHARS;
  const out: StaleFile[] = [];
  for (const r of sorted) {
    const file: StaleFile = { path: r.path, pinned: r.pinned, current: r.current, diff_complete: false };
    const before = await pinnedState(ws, r.pinned, r.state);
    if (before !== undefined && budget > 0) {
      const change: AppliedChange = { status: "modified", path: r.path, requested: r.path, before, after: r.state, blob: r.current };
      const shown = appliedDiff([change], new Map(), budget);
      file.diff = shown.diff;
      file.diff_complete = shown.omitted === 0 && textual(before) && textual(r.state);
      budget -= shown.diff.length;
      // the caller may pin what the diff showed whole: keep it for the next diff
      if (file.diff_complete && r.state && r.current) await keepShown(ws, r.current, r.state.bytes);
    }
    out.push(file);
  }
  return out;
}

/** The pinned content as a file state (the current mode, so the diff shows content only); undefined when not kept. */
async function pinnedState(ws: Workspace, pinned: BlobId | null, current: PathState): Promise<PathState | undefined> {
  if (pinned === null) return null;
  const size = await ws.blobs.size(pinned).catch(() => null);
  if (size === null || size > PINNED_DIFF_MAX) return undefined;
  try {
    return { bytes: await ws.blobs.read(pinned), mode: current?.mode ?? "100644" };
  } catch {
    return undefined;
  }
}

function textual(s: PathState): boolean {
  return s === null || !isBinary(s.bytes);
}

/** "src/a.ts (read 1a2b3c4d5e6f, now 9f8e7d6c5b4a)": how a message names a stale file. */
function named(f: StaleFile): string {
  const was = f.pinned === null ? "absent when read" : `read ${f.pinned.slice(7, 19)}`;
  const now = f.current === null ? "now deleted" : `now ${f.current.slice(7, 19)}`;
  return `${f.path} (${was}, ${now})`;
}

/**
 * The refusal of a write over files that changed since the session read them:
 * REPO_CHANGED with reason "stale_read", each file with its blobs and the diff
 * of what changed. Nothing was written.
 */
export function staleReadRefusal(files: StaleFile[], total: number, what: string): WorksnapError {
  const list = files.map((f) => f.path).join(", ");
  const more = total > files.length ? ` and ${total - files.length} more` : "";
  const merge = files.every((f) => f.diff_complete)
    ? "The diff shows what changed since: apply your change to the current content and retry"
    : "Read the file again (or use the diff shown), then retry";
  return new WorksnapError(
    "REPO_CHANGED",
    `${what} was refused: ${list}${more} changed since this session read ${total === 1 ? "it" : "them"}; nothing was written. ${merge}.`,
    { reason: "stale_read", files, files_total: total },
  );
}

/** The warning of a patch applied over files that changed since they were read (its context still matched). */
export function staleReadWarning(f: StaleFile): string {
  return `${named(f)} changed since this session read it; the patch's context still matched, so it was applied${f.diff_complete ? " (what had changed is shown beside it)" : ": read it again before editing it further"}`;
}
