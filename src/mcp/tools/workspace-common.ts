import * as v from "valibot";
import type { Workspace } from "../../ops/workspace";
import type { ToolContext } from "../define-tool";
import type { Props } from "../output-schema";
import { modeOf } from "./common";
import { WorksnapError } from "../../core/errors";
import type { BlobId } from "../../core/hash";
import type { PinLookup } from "../../ops/write/pin-check";
import type { WrittenFile } from "../../ops/mutate/mutation";
import type { StaleFile } from "../../ops/mutate/stale-reads";

/** Arguments and answer fields the four workspace mutation tools share. */
export const writeModeArg = v.pipe(
  v.picklist(["worktree", "snapshot"]),
  v.description('Default "snapshot" (derive a new one) with snapshot_id, else "worktree" (the live files).'),
);

export const conversationArg = v.pipe(
  v.string(),
  v.description("Groups a turn's edits for review: omit on the first, then pass the id it returns."),
);

const changedSchema = {
  type: "array",
  items: {
    type: "object",
    properties: {
      path: { type: "string" },
      status: { type: "string", enum: ["created", "modified", "deleted", "renamed"] },
      from: { type: "string" },
      blob: { type: "string" },
      mode: { type: "string", enum: ["100755", "120000"] },
      requested_path: { type: "string" },
    },
    required: ["path", "status"],
  },
};

export const mutationProps: Props = {
  base_snapshot_id: { type: "string" },
  changed: changedSchema,
  changed_total: { type: "integer" },
  truncated: { type: "boolean" },
  diff: { type: "string" },
  diff_omitted: { type: "integer" },
  stale_reads: {
    type: "array",
    items: {
      type: "object",
      properties: {
        path: { type: "string" },
        pinned: { type: ["string", "null"] },
        current: { type: ["string", "null"] },
        diff: { type: "string" },
        diff_complete: { type: "boolean" },
      },
      required: ["path", "pinned", "current", "diff_complete"],
    },
  },
  stale_reads_total: { type: "integer" },
  mcp_conversation_id: { type: "string" },
  note: { type: "string" },
};

export const mutationRequired = ["changed", "changed_total", "truncated"];

interface MutationCall {
  mcp_conversation_id?: string;
  signal?: AbortSignal;
  onProgress?: (done: number, total: number, message?: string) => void;
  onRecorded?: (recorded: { conversation_id: string; edit_ids: string[]; first_call: boolean }) => void;
  pins?: PinLookup;
  staleWrites?: "warn" | "refuse";
  onWritten?: (files: WrittenFile[]) => void;
}

type Mode = "worktree" | "snapshot";

/**
 * Runs a mutation op with the call's cancellation and progress, and remembers
 * on the session the conversation it wrote into: one the server started for
 * it (the call named none) is the session's own; one the call named is its
 * own when this first recorded write of the session opened it (session.ts).
 *
 * The session's auto-lease (pins.ts): the op gets the session's pins for the
 * root (used when the call gives no lease_id) and the server's stale-writes
 * setting; what it wrote is pinned, except a file whose change since the
 * session saw it the answer did not show whole. A refusal over files that
 * changed pins the current blob of each file whose whole change it showed.
 */
export async function runMutationTool<
  A extends { mode?: Mode; snapshot_id?: string; mcp_conversation_id?: string },
  R extends object & { mcp_conversation_id?: string } = { mcp_conversation_id?: string },
>(args: A, ctx: ToolContext, op: (ws: Workspace, call: A & { mode: Mode } & MutationCall) => Promise<R>): Promise<R> {
  let recorded = null as { edit_ids: string[]; first_call: boolean } | null;
  const pins = ctx.session.pins(ctx.ws.repo.root);
  let out: R;
  try {
    out = await op(ctx.ws, {
      ...args,
      mode: modeOf(args),
      signal: ctx.signal,
      onProgress: ctx.progress,
      onRecorded: (r) => void (recorded = r),
      pins: pins.view(),
      staleWrites: ctx.session.staleWrites,
      onWritten: (files) => pins.merge(files.filter((f) => f.unseen !== true).map((f) => [f.path, f.blob] as const)),
    });
  } catch (err) {
    pins.merge(shownByRefusal(err));
    throw err;
  }
  const conv = out.mcp_conversation_id;
  if (conv !== undefined && recorded !== null) {
    if (args.mcp_conversation_id === undefined) ctx.session.conversationStarted(conv);
    // whether the write opened the conversation is what its record says (its tool call's index), not read back
    else ctx.session.conversationWritten(conv, recorded.first_call);
  }
  return { ...out };
}

/** The files a stale-read refusal showed whole (the diff from the pin gives the current content): pinned to what is on disk now. */
function shownByRefusal(err: unknown): [string, BlobId | null][] {
  if (!(err instanceof WorksnapError) || err.code !== "REPO_CHANGED" || err.details.reason !== "stale_read") return [];
  const files = err.details.files as StaleFile[];
  return files.filter((f) => f.diff_complete).map((f) => [f.path, f.current]);
}
