/**
 * The edit history in memory: the same contract as FsHistoryStore (the
 * conformance suite runs against both), for tests and for tools that replay a
 * history without touching a disk.
 */
import { compareUtf8 } from "../../core/byte-order";
import { notFound } from "../../core/errors";
import { withQueue } from "../../repo/file-lock";
import { byTimestamp, checkConversationId, checkObjectRel, checkReviewId, logRel, parseLog, parseReview, parseWriteIntent, serializeLog, type HistoryStore } from "./store";
import type { LogEntry, ReviewRecord, WriteIntent } from "./types";

let instances = 0;

export class MemHistoryStore implements HistoryStore {
  readonly location = "memory";
  private readonly logs = new Map<string, { text: string; version: number }>();
  private readonly objects = new Map<string, Uint8Array>();
  private readonly reviews = new Map<string, string>();
  private readonly intents = new Map<string, string>();
  private readonly writeIntents = new Map<string, string>();
  private clock: string | null = null;
  private versions = 0;
  /** Bumped by every change to a log, review or intent. */
  private changes = 0;
  private readonly lockPrefix = `mem-history-${++instances}:`;

  async listConversations(): Promise<string[]> {
    return [...this.logs.keys()].sort(compareUtf8);
  }

  async readLog(conv: string): Promise<LogEntry[]> {
    const log = this.logs.get(checkConversationId(conv));
    return log ? parseLog(log.text, logRel(conv)) : [];
  }

  async logVersion(conv: string): Promise<string | null> {
    const log = this.logs.get(checkConversationId(conv));
    return log ? String(log.version) : null;
  }

  async writeLog(conv: string, entries: LogEntry[]): Promise<void> {
    this.logs.set(checkConversationId(conv), { text: serializeLog(entries), version: ++this.versions });
    this.changes++;
  }

  async appendLog(conv: string, entries: LogEntry[]): Promise<void> {
    if (entries.length === 0) return;
    const old = this.logs.get(checkConversationId(conv))?.text ?? "";
    this.logs.set(conv, { text: old + serializeLog(entries), version: ++this.versions });
    this.changes++;
  }

  async changeStamp(): Promise<string> {
    return String(this.changes);
  }

  withLogLock<T>(conversationIds: string[], fn: () => Promise<T>): Promise<T> {
    const ids = [...new Set(conversationIds.map(checkConversationId))].sort(compareUtf8);
    const run = (i: number): Promise<T> => (i === ids.length ? fn() : withQueue(this.lockPrefix + ids[i], () => run(i + 1)));
    return run(0);
  }

  async putObject(rel: string, bytes: Uint8Array): Promise<void> {
    this.objects.set(checkObjectRel(rel), new Uint8Array(bytes));
  }

  async getObject(rel: string): Promise<Uint8Array> {
    const b = this.objects.get(checkObjectRel(rel));
    if (!b) throw notFound(`history object ${rel} is missing`, { object: rel });
    return new Uint8Array(b);
  }

  async hasObject(rel: string): Promise<boolean> {
    return this.objects.has(checkObjectRel(rel));
  }

  async deleteObject(rel: string): Promise<void> {
    this.objects.delete(checkObjectRel(rel));
  }

  async removeConversation(conv: string): Promise<void> {
    this.logs.delete(checkConversationId(conv));
    this.changes++;
    for (const k of [...this.objects.keys()]) if (k.startsWith(`diffs/${conv}/`) || k.startsWith(`checkpoints/${conv}/`)) this.objects.delete(k);
  }

  async listReviews(): Promise<ReviewRecord[]> {
    return [...this.reviews.entries()].map(([id, t]) => parseReview(t, `reviews/${id}.json`)).sort(byTimestamp);
  }

  async putReview(record: ReviewRecord): Promise<void> {
    this.reviews.set(checkReviewId(record.review_id), JSON.stringify(record));
    this.changes++;
  }

  async deleteReview(reviewId: string): Promise<void> {
    this.reviews.delete(checkReviewId(reviewId));
    for (const k of [...this.objects.keys()]) if (k.startsWith(`reviews/${reviewId}/`)) this.objects.delete(k);
    this.changes++;
  }

  async listIntents(): Promise<ReviewRecord[]> {
    return [...this.intents.entries()].map(([id, t]) => parseReview(t, `intents/${id}.json`)).sort(byTimestamp);
  }

  async putIntent(record: ReviewRecord): Promise<void> {
    this.intents.set(checkReviewId(record.review_id), JSON.stringify(record));
    this.changes++;
  }

  async deleteIntent(reviewId: string): Promise<void> {
    this.intents.delete(checkReviewId(reviewId));
    this.changes++;
  }

  async listWriteIntents(): Promise<WriteIntent[]> {
    return [...this.writeIntents.entries()].map(([id, t]) => parseWriteIntent(t, `pending_writes/${id}.json`)).sort(byTimestamp);
  }

  async putWriteIntent(intent: WriteIntent): Promise<void> {
    this.writeIntents.set(checkReviewId(intent.intent_id), JSON.stringify(intent));
  }

  async deleteWriteIntent(intentId: string): Promise<void> {
    this.writeIntents.delete(checkReviewId(intentId));
  }

  async readClock(): Promise<string | null> {
    return this.clock;
  }

  async writeClock(timestamp: string): Promise<void> {
    this.clock = timestamp;
  }
}
