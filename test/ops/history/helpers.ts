/** A work tree with a recording write path, for history tests at the op level (real files, real history). */
import { existsSync, readdirSync, readFileSync, statSync } from "node:fs";
import { join, relative } from "node:path";
import type { RepoPath } from "../../../src/core/repo-path";
import { FsHistoryStore } from "../../../src/ops/history/fs-history-store";
import { historyStatus } from "../../../src/ops/history/query";
import { reviewEdits, type ReviewRequest, type ReviewResult } from "../../../src/ops/history/review";
import type { LogEntry } from "../../../src/ops/history/types";
import { closeWorkspace, openWorkspace, type Workspace } from "../../../src/ops/workspace";
import { applyChanges, type WriteChange } from "../../../src/ops/write/write-path";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";

const enc = (s: string | Uint8Array) => (typeof s === "string" ? new TextEncoder().encode(s) : s);

export interface HistoryFixture extends AsyncDisposable {
  repo: TmpRepo;
  ws: Workspace;
  store: FsHistoryStore;
  /** One tool call: its changes are recorded under `conv`; returns the edit ids in change order. */
  call(conv: string, changes: WriteChange[], toolName?: string): Promise<string[]>;
  write(conv: string, path: string, content: string | Uint8Array, mode?: "100644" | "100755"): Promise<string>;
  move(conv: string, from: string, to: string, opts?: { overwrite?: boolean; content?: string }): Promise<string[]>;
  del(conv: string, path: string): Promise<string>;
  review(req: ReviewRequest): Promise<ReviewResult>;
  entries(): Promise<LogEntry[]>;
  read(path: string): string | null;
  /** Every file under the root except .mcp (and .git), path -> content. */
  tree(): Record<string, string>;
}

export async function historyFixture(opts: { git?: boolean } = {}): Promise<HistoryFixture> {
  const repo = await tmpRepo({ git: opts.git ?? false });
  const ws = openWorkspace(repo.root);
  const store = new FsHistoryStore(ws.repo.stateDir);
  const call = async (conv: string, changes: WriteChange[], toolName = "edit_file_diff") =>
    (await applyChanges(ws, changes, { recorder: ws.recorder, conversationId: conv, toolName })).editIds;
  const fx: HistoryFixture = {
    repo,
    ws,
    store,
    call,
    async write(conv, path, content, mode) {
      const change: WriteChange = { kind: "write", path: path as RepoPath, bytes: enc(content), operation: "edit" };
      if (mode) change.mode = mode;
      return (await call(conv, [change], existsSync(join(repo.root, path)) ? "edit_file_diff" : "write_file"))[0]!;
    },
    async move(conv, from, to, o = {}) {
      const change: WriteChange = { kind: "move", from: from as RepoPath, path: to as RepoPath };
      if (o.overwrite) change.overwrite = true;
      if (o.content !== undefined) change.bytes = enc(o.content);
      return call(conv, [change], "move_file");
    },
    async del(conv, path) {
      return (await call(conv, [{ kind: "delete", path: path as RepoPath }], "delete_file"))[0]!;
    },
    review: (req) => reviewEdits(ws, store, req),
    entries: async () => (await historyStatus(store)).entries,
    read(path) {
      const abs = join(repo.root, path);
      return existsSync(abs) ? readFileSync(abs, "utf8") : null;
    },
    tree() {
      const out: Record<string, string> = {};
      const walk = (dir: string) => {
        for (const name of readdirSync(dir).sort()) {
          const abs = join(dir, name);
          const rel = relative(repo.root, abs);
          if (rel === ".mcp" || rel === ".git") continue;
          if (statSync(abs).isDirectory()) walk(abs);
          else out[rel] = readFileSync(abs, "utf8");
        }
      };
      walk(repo.root);
      return out;
    },
    async [Symbol.asyncDispose]() {
      closeWorkspace(ws);
      await repo[Symbol.asyncDispose]();
    },
  };
  return fx;
}

/** n numbered lines, each unique: "name 1\n" ... */
export function numbered(name: string, n: number): string[] {
  return Array.from({ length: n }, (_, i) => `${name} ${i + 1}`);
}

export const text = (lines: string[]) => `${lines.join("\n")}\n`;
