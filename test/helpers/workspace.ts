import { existsSync, lstatSync, readdirSync, readFileSync, readlinkSync } from "node:fs";
import { join } from "node:path";
import type { RepoPath } from "../../src/core/repo-path";
import { BESIDE_NOTE } from "../../src/repo/beside-temps";
import { nativeModule } from "../../src/repo/native";
import type { EditChange, EditContext, EditRecorder, PreparedEdit } from "../../src/ops/write/edit-recorder";
import { closeWorkspace, openWorkspace, type Workspace } from "../../src/ops/workspace";
import type { TmpRepo } from "./tmp-repo";

export const rp = (p: string) => p as RepoPath;
export const enc = (s: string) => new TextEncoder().encode(s);

/** A workspace for a temp repo, closed on dispose. */
export function wsOf(repo: TmpRepo): Workspace & Disposable {
  const ws = openWorkspace(repo.root);
  return Object.assign(ws, { [Symbol.dispose]: () => closeWorkspace(ws) });
}

export function read(root: string, path: string): string {
  return readFileSync(join(root, path), "utf8");
}

export function permOf(root: string, path: string): number {
  return lstatSync(join(root, path)).mode & 0o7777;
}

export function linkOf(root: string, path: string): string {
  return readlinkSync(join(root, path));
}

/**
 * Names in .mcp/tmp (temp files of writes in flight; empty when none is). Without the native module a rollback
 * puts a file back under a name made beside it (no exchange of names), which this process notes in
 * `{pid}-beside` and keeps while it runs (repo/beside-temps.ts): that note is left out then.
 */
export function temps(root: string): string[] {
  const dir = join(root, ".mcp", "tmp");
  const note = nativeModule() === null ? `${process.pid}-${BESIDE_NOTE}` : null;
  return existsSync(dir) ? readdirSync(dir).filter((n) => n !== note) : [];
}

/** Every file under root except .git and .mcp, with its bytes as text: a whole-tree comparison. */
export function treeText(root: string): Record<string, string> {
  const out: Record<string, string> = {};
  const walk = (rel: string) => {
    for (const d of readdirSync(join(root, rel), { withFileTypes: true })) {
      const p = rel ? `${rel}/${d.name}` : d.name;
      if (p === ".git" || p === ".mcp") continue;
      if (d.isSymbolicLink()) out[p] = `-> ${readlinkSync(join(root, p))}`;
      else if (d.isDirectory()) walk(p);
      else out[p] = readFileSync(join(root, p), "latin1");
    }
  };
  walk("");
  return out;
}

export interface RecordedCall {
  phase: "prepare" | "seal" | "commit" | "abort";
  ctx?: EditContext;
  changes?: EditChange[];
  /** What the work tree held for each change's path when the hook ran. */
  onDisk?: (string | null)[];
}

/**
 * A recorder that keeps what the write path hands it, and can be told to fail
 * or to act at a phase: the write path is what these tests exercise.
 */
export function recordingRecorder(root: string, opts: { failCommit?: boolean; duringPrepare?: () => void } = {}): EditRecorder & { calls: RecordedCall[] } {
  const calls: RecordedCall[] = [];
  const snapshotDisk = (changes: EditChange[]) =>
    changes.map((c) => (existsSync(join(root, c.path)) ? readFileSync(join(root, c.path), "latin1") : null));
  return {
    calls,
    async prepare(ctx, changes) {
      calls.push({ phase: "prepare", ctx, changes: structuredClone(changes), onDisk: snapshotDisk(changes) });
      opts.duringPrepare?.();
      return { token: calls.length } as PreparedEdit;
    },
    async seal(prepared) {
      const prep = calls[(prepared.token as number) - 1];
      calls.push({ phase: "seal", onDisk: prep?.changes ? snapshotDisk(prep.changes) : [] });
    },
    async commit(_prepared, changes) {
      calls.push({ phase: "commit", changes: structuredClone(changes), onDisk: snapshotDisk(changes) });
      if (opts.failCommit) throw new Error("history store is full");
      return { editIds: changes.map((_, i) => `edit_${i}`), toolCallIndex: (calls.filter((c) => c.phase === "commit").length - 1) };
    },
    async abort() {
      calls.push({ phase: "abort" });
    },
  };
}

export const dec = (b: Uint8Array | undefined | null) => (b ? Buffer.from(b).toString("latin1") : null);
