/**
 * What a history store can do for many objects at once. FsHistoryStore writes
 * a tool call's checkpoints and diffs as one durable batch (one flush for all
 * of them instead of two per object); any other HistoryStore gets the same
 * effect one object at a time, so callers never depend on the capability.
 */
import { dirname } from "node:path";
import { checkObjectRel, type HistoryStore } from "./store";

export interface ObjectWrite {
  rel: string;
  bytes: Uint8Array;
}

export interface BatchingHistoryStore {
  /** Writes every (new) object atomically; all of them are durable when it returns. */
  putObjects(items: ObjectWrite[]): Promise<void>;
  /** The object names in one directory of the history (e.g. `checkpoints/{conv}`); empty when it does not exist. */
  objectNames(dir: string): Promise<Set<string>>;
  /** Removes objects written by putObjects; a batch's objects may only be removed together. */
  deleteObjects(rels: string[]): Promise<void>;
  /** A batch written and made durable from now on, off the JavaScript thread, and placed later, if the store can (FsHistoryStore.startPack). */
  startPack?(items: ObjectWrite[]): PendingPack | null;
}

/** A batch of new objects being written and made durable off the JavaScript thread, not yet in place. */
export interface PendingPack {
  readonly rels: readonly string[];
  /** Waits until every byte is durable, then puts the objects in place, durably; on failure nothing of them stays. Once. */
  finish(): Promise<void>;
  /** Removes what was written, once the write is over (the promise says when); nothing after finish was called. */
  discard(): Promise<void>;
}

/** startPack where the store has it; null otherwise (putObjects writes the same objects then). */
export function startPack(store: HistoryStore, items: ObjectWrite[]): PendingPack | null {
  const b = batching(store);
  return b?.startPack ? b.startPack(items) : null;
}

function batching(store: HistoryStore): BatchingHistoryStore | null {
  const s = store as HistoryStore & Partial<BatchingHistoryStore>;
  return typeof s.putObjects === "function" && typeof s.objectNames === "function" && typeof s.deleteObjects === "function" ? (s as BatchingHistoryStore) : null;
}

/** Removes the objects of batches (all objects of each); one by one on a store without batches. */
export async function deleteObjects(store: HistoryStore, rels: string[]): Promise<void> {
  if (rels.length === 0) return;
  const b = batching(store);
  if (b) return b.deleteObjects(rels);
  for (const rel of rels) await store.deleteObject(rel);
}

export async function putObjects(store: HistoryStore, items: ObjectWrite[]): Promise<void> {
  if (items.length === 0) return;
  const b = batching(store);
  if (b) return b.putObjects(items);
  for (const it of items) await store.putObject(it.rel, it.bytes);
}

/**
 * Existence checks for many objects: one directory listing per directory on a
 * batching store, hasObject otherwise. Valid while the caller holds the
 * work-tree lock (nobody else writes the history meanwhile).
 */
export class ObjectPresence {
  private readonly listed = new Map<string, Promise<Set<string>>>();

  constructor(private readonly store: HistoryStore) {}

  async has(rel: string): Promise<boolean> {
    const b = batching(this.store);
    if (!b) return this.store.hasObject(rel);
    const dir = dirname(checkObjectRel(rel));
    let names = this.listed.get(dir);
    if (!names) {
      names = b.objectNames(dir);
      this.listed.set(dir, names);
    }
    return (await names).has(rel.slice(dir.length + 1));
  }

  /** An object written after the listing. */
  async note(rel: string): Promise<void> {
    const names = this.listed.get(dirname(rel));
    if (names) (await names).add(rel.slice(dirname(rel).length + 1));
  }
}
