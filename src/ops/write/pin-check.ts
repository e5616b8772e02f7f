import { blobIdOfState } from "../../core/content-hash";
import { WorksnapError } from "../../core/errors";
import type { BlobId } from "../../core/hash";
import type { RepoPath } from "../../core/repo-path";
import type { PathState } from "./edit-recorder";
import type { WorktreeTarget } from "./target";

/**
 * What a caller last showed of each file (an MCP session's pins: the blob of
 * the content a read, a grep match or its own write showed; null for "no
 * file"), checked by the write path under the work-tree lock against what is
 * on disk. A path the caller never showed has no pin and is not checked.
 */
export interface PinCheck {
  pins: PinLookup;
  /** "refuse": a pinned file that changed stops the change set (StaleReadsError); "report": it goes on, and the outcome names the files. */
  onStale: "refuse" | "report";
}

/** A caller's pins by path (undefined: never shown); a map is one, and so is a view that compares paths as its file system does. */
export interface PinLookup {
  get(path: string): BlobId | null | undefined;
}

/** A pinned file whose content on disk is no longer the pinned one. */
export interface StaleRead {
  path: RepoPath;
  pinned: BlobId | null;
  current: BlobId | null;
  /** What is on disk now (read under the lock), for the diff the refusal or warning shows. */
  state: PathState;
}

/** The files of a change set a caller's pins say changed since it saw them, in the order the change set touches them. */
export function staleReads(pins: PinLookup, befores: Iterable<{ target: WorktreeTarget; state: PathState }>): StaleRead[] {
  const out: StaleRead[] = [];
  for (const b of befores) {
    // a directory has no content; a symlink's pin names its target's content (reads and write_file follow links)
    if (b.target.kind === "dir" || b.state?.mode === "120000") continue;
    const pinned = pins.get(b.target.path);
    if (pinned === undefined) continue;
    const current = b.state ? blobIdOfState(b.state.bytes) : null;
    if (current !== pinned) out.push({ path: b.target.path, pinned, current, state: b.state });
  }
  return out;
}

/**
 * A change set refused because files it touches changed since the caller saw
 * them. REPO_CHANGED (reason "stale_read"): no lease was given, so there is
 * none to call stale. The mutate room words it and adds what changed
 * (mutate/stale-reads.ts); `reads` carries the states for that.
 */
export class StaleReadsError extends WorksnapError {
  constructor(readonly reads: StaleRead[]) {
    const first = reads[0] as StaleRead;
    const more = reads.length > 1 ? ` (and ${reads.length - 1} more)` : "";
    super("REPO_CHANGED", `${first.path}${more} changed since this session read it; nothing was written`, {
      reason: "stale_read",
      files: reads.map((r) => ({ path: r.path, pinned: r.pinned, current: r.current })),
    });
  }
}
