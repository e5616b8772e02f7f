/**
 * A server's watch on its work tree (src/native/tree_watch.c, Linux inotify):
 * the paths changed since it was last asked, or that anything may have
 * changed (a reset). Only where the native module runs; elsewhere `start`
 * gives null and statuses go on without it.
 */
import { nativeModule } from "./native";

export type TreeWatchHandle = { readonly __treeWatch: unique symbol };

interface WatchModule {
  treeWatchStart(root: string, shallow: Uint8Array, maxWatches: number): TreeWatchHandle | number;
  treeWatchTake(handle: TreeWatchHandle, waitMs: number, maxBytes: number): [number, number, Uint8Array | null];
  treeWatchCount(handle: TreeWatchHandle): number;
  treeWatchClose(handle: TreeWatchHandle): void;
}

const TW_RESET = 1;
const TW_FAILED = 2;
const TW_BUSY = 4;

/** What a take found: nothing yet (the first walk runs, or the thread is behind), the end, or the changes. */
export type Taken = { kind: "busy" } | { kind: "failed"; errno: number } | { kind: "changes"; reset: boolean; paths: string[] };

/**
 * A watch on every directory under `root` but those named `.git` (`shallow`: relative paths, as latin1 strings
 * of their bytes, watched without their contents: only a `.gitignore` made, changed or removed in one is
 * reported), at most `maxWatches` of the kernel's watches; null when this
 * platform or build has none, or it cannot start.
 */
export class TreeWatch {
  private constructor(
    private readonly mod: WatchModule,
    private handle: TreeWatchHandle | null,
  ) {}

  static start(root: string, shallow: string[], maxWatches: number): TreeWatch | null {
    const mod = nativeModule() as unknown as Partial<WatchModule> | null;
    if (!mod || typeof mod.treeWatchStart !== "function") return null;
    const names = Buffer.from(shallow.map((p) => `${p}\0`).join(""), "latin1");
    const handle = mod.treeWatchStart(root, names, maxWatches);
    return typeof handle === "number" ? null : new TreeWatch(mod as WatchModule, handle);
  }

  /**
   * The paths changed since the last take (relative to the root, as latin1 strings of their bytes; a
   * directory's with a trailing "/"), once the watch's thread has read every event queued before this call;
   * `busy` when it did not within `waitMs`. A negative wait takes what the thread has read so far.
   */
  take(waitMs: number, maxBytes = 1 << 20): Taken {
    if (this.handle === null) return { kind: "failed", errno: 0 };
    const [flags, errno, bytes] = this.mod.treeWatchTake(this.handle, waitMs, maxBytes);
    if (flags & TW_FAILED) return { kind: "failed", errno };
    if (flags & TW_BUSY) return { kind: "busy" };
    const paths = bytes === null ? [] : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString("latin1").split("\0");
    if (paths.length > 0) paths.pop(); // after the last NUL
    return { kind: "changes", reset: (flags & TW_RESET) !== 0, paths };
  }

  /** The kernel watches it holds. */
  count(): number {
    return this.handle === null ? 0 : this.mod.treeWatchCount(this.handle);
  }

  close(): void {
    if (this.handle === null) return;
    this.mod.treeWatchClose(this.handle);
    this.handle = null;
  }
}
