/**
 * Reads what a replay needs from the store, each object once: checkpoints
 * (bytes and mode), the change an entry made (its diff's hunks, or the bytes
 * after for changes a diff cannot replay), and the bytes a review wrote.
 * Used under the work-tree lock (reviews), so which `.after` objects exist is
 * listed once per conversation instead of asked per entry.
 */
import type { FileMode } from "../../core/file-mode";
import { internal } from "../../core/errors";
import { sha256Hex } from "../../core/hash";
import { parsePatch } from "../patch/parse";
import type { PatchHunk } from "../patch/types";
import { ObjectPresence } from "./batch-store";
import { afterRel, checkpointMetaRel, type HistoryStore } from "./store";
import type { CheckpointMeta, LogEntry } from "./types";

export interface Content {
  bytes: Uint8Array;
  mode: FileMode;
}

/** What an entry did to the content (a delete has no content change). */
export type ContentChange =
  | { kind: "hunks"; hunks: PatchHunk[]; newMode?: FileMode }
  | { kind: "exact"; bytes: Uint8Array; newMode?: FileMode }
  | { kind: "delete" };

const decoder = new TextDecoder();

export class HistoryObjects {
  private readonly checkpoints = new Map<string, Promise<Content & { path: string; hash: string }>>();
  private readonly changes = new Map<string, Promise<ContentChange>>();
  private readonly presence: ObjectPresence;

  constructor(readonly store: HistoryStore) {
    this.presence = new ObjectPresence(store);
  }

  checkpoint(rel: string): Promise<Content & { path: string; hash: string }> {
    let p = this.checkpoints.get(rel);
    if (!p) {
      p = (async () => {
        const meta = JSON.parse(decoder.decode(await this.store.getObject(checkpointMetaRel(rel)))) as CheckpointMeta;
        const bytes = await this.store.getObject(rel);
        if (sha256Hex(bytes) !== meta.hash) throw internal(`checkpoint ${rel} is damaged: its bytes do not have the recorded hash`, { checkpoint: rel });
        return { bytes, mode: meta.mode, path: meta.path, hash: meta.hash };
      })();
      this.checkpoints.set(rel, p);
    }
    return p;
  }

  async content(rel: string, mode: FileMode): Promise<Content> {
    return { bytes: await this.store.getObject(rel), mode };
  }

  change(e: LogEntry): Promise<ContentChange> {
    let p = this.changes.get(e.edit_id);
    if (!p) {
      p = this.loadChange(e);
      this.changes.set(e.edit_id, p);
    }
    return p;
  }

  private async loadChange(e: LogEntry): Promise<ContentChange> {
    if (e.operation === "delete") return { kind: "delete" };
    const diff = e.diff_file ? decoder.decode(await this.store.getObject(e.diff_file)) : "";
    const parsed = diff === "" ? null : parsePatch(diff);
    const lastNew = parsed ? [...parsed.files].reverse().find((f) => f.newPath !== null) : undefined;
    const rel = afterRel(e.conversation_id, e.edit_id);
    if (await this.presence.has(rel)) {
      const change: ContentChange = { kind: "exact", bytes: await this.store.getObject(rel) };
      if (lastNew?.newMode) change.newMode = lastNew.newMode;
      return change;
    }
    if (!parsed) return { kind: "hunks", hunks: [] };
    const file = parsed.files[0];
    if (parsed.files.length !== 1 || !file || file.binary || parsed.rejects.length > 0) {
      throw internal(`the diff of edit ${e.edit_id} (${e.diff_file}) cannot be replayed and the bytes after it were not stored`, { edit_id: e.edit_id });
    }
    const change: ContentChange = { kind: "hunks", hunks: file.hunks };
    if (file.newMode) change.newMode = file.newMode;
    return change;
  }
}
