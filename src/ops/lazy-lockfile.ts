import type lockfileModule from "proper-lockfile";

let loaded: Promise<typeof lockfileModule> | null = null;

/**
 * proper-lockfile, loaded on first use: it pulls in graceful-fs, whose set-up
 * costs tens of milliseconds, and read-only commands never take a lock.
 */
export function properLockfile(): Promise<typeof lockfileModule> {
  loaded ??= import("proper-lockfile").then((m) => m.default);
  return loaded;
}
