import { WorksnapError } from "../../core/errors";
import { cleanupHistory, parseDuration } from "../../ops/history/cleanup";
import type { ExternalChange } from "../../ops/history/external";
import { FsHistoryStore } from "../../ops/history/fs-history-store";
import { type CompletedWrite, completeInterruptedWritesNow } from "../../ops/history/interrupted";
import { historyShow, historyStatus } from "../../ops/history/query";
import type { Conflict } from "../../ops/history/reapply";
import { previewReview, recoverReviews, reviewEdits, type DiscardPolicy } from "../../ops/history/review";
import { closeWorkspace, openWorkspace, type Workspace } from "../../ops/workspace";
import { UsageError, parseArgv, type FlagSpec } from "../args";
import { printJson, stderr, stdout } from "../output";
import { askYesNo, interactive } from "./history-prompt";
import { painter, renderCleanup, renderCompletedWrites, renderConflicts, renderExternal, renderPreview, renderReview, renderShow, renderStatus, statusJson } from "./history-render";
import { shownPath } from "../shown-path";

export const HISTORY_HELP = `worksnap history <command> [--root DIR] [--json]
       mcpdiff <command> [--root DIR] [--json]     (the same binary, run under that name)

Review the edits agents made through the worksnap tools, one by one or by
conversation. Every write is recorded in .mcp/edit_history/ (no git needed).

  status [--conv ID] [--file PATH] [--status pending|accepted|rejected]
                              recorded edits, oldest first
  show EDIT_ID|CONV_ID        the diff of an edit, or of every edit of a conversation
  accept EDIT_ID... | --conv ID [--force] [--dry-run]
                              mark edits accepted; files are not touched. --conv accepts
                              the conversation's pending edits; a rejected edit is
                              accepted (and applied again) only when named by its id
  reject EDIT_ID... | --conv ID [--cascade] [--force] [--dry-run]
                              mark edits rejected and rebuild the affected files from
                              their checkpoints with the remaining edits
  review [--port N] [--open]  a local page to review every edit as a diff and accept
                              or reject it (127.0.0.1 only; prints the URL)
  recover [--force]           finish a review that was interrupted (crash, kill)
  cleanup --resolved [--older-than DURATION]
                              remove conversations whose edits are all accepted or
                              rejected (DURATION: 30d, 12h, 90m, 2w)

Ids can be shortened to a unique prefix of at least 4 characters.
Before accept or reject, every affected file must be as the history last
recorded it. If it is not, the difference is shown and nothing is written; on a
terminal you are asked whether to discard the outside changes, elsewhere
--force discards them. If a later edit depends on a rejected one, nothing is
written and the dependent edits are named; --cascade rejects them too.
--dry-run shows what accept or reject would do (dependent edits, outside
changes, the files it would write) and writes nothing.
Exit codes: 0 ok, 1 refused or user error (nothing written), 2 usage, 70 internal.
`;

const COMMON: FlagSpec = { root: { kind: "string" }, json: { kind: "bool" } };

type Flags = Record<string, unknown>;
/** `completed`: interrupted recorded writes this command completed first (every command does, under the lock). */
type Sub = (ws: Workspace, store: FsHistoryStore, positionals: string[], flags: Flags, completed: CompletedWrite[]) => Promise<number>;

const SUBCOMMANDS: Record<string, { flags: FlagSpec; run: Sub }> = {
  status: {
    flags: { conv: { kind: "string" }, file: { kind: "string" }, status: { kind: "string" } },
    run: async (_ws, store, pos, flags) => {
      if (pos.length > 0) throw new UsageError("status takes no arguments; filter with --conv, --file, --status");
      const r = await historyStatus(store, { conversation: str(flags.conv), file: str(flags.file), status: str(flags.status) });
      if (flags.json) stdout(statusJson(r));
      else stdout(renderStatus(r, painter(1)));
      return 0;
    },
  },
  show: {
    flags: {},
    run: async (_ws, store, pos, flags) => {
      if (pos.length !== 1) throw new UsageError("show takes one EDIT_ID or CONV_ID");
      const r = await historyShow(store, pos[0]!);
      if (flags.json) printJson(r);
      else stdout(renderShow(r, painter(1)));
      return 0;
    },
  },
  accept: { flags: { conv: { kind: "string" }, force: { kind: "bool" }, "dry-run": { kind: "bool" } }, run: (ws, store, pos, flags) => review("accept", ws, store, pos, flags) },
  reject: {
    flags: { conv: { kind: "string" }, force: { kind: "bool" }, cascade: { kind: "bool" }, "dry-run": { kind: "bool" } },
    run: (ws, store, pos, flags) => review("reject", ws, store, pos, flags),
  },
  review: {
    flags: { port: { kind: "string" }, open: { kind: "bool" } },
    run: async (ws, store, pos, flags) => {
      if (pos.length > 0) throw new UsageError("review takes no arguments");
      const { cmdReviewPage } = await import("./history-review");
      return cmdReviewPage(ws, store, flags);
    },
  },
  recover: {
    flags: { force: { kind: "bool" } },
    run: async (ws, store, pos, flags, completed) => {
      if (pos.length > 0) throw new UsageError("recover takes no arguments");
      const shown: Shown = { external: false };
      const r = await withExplainedErrors(flags, shown, () => recoverReviews(ws, store, discardPolicy(flags, shown)));
      const writes = [...completed, ...ws.completedWrites.splice(0)];
      if (flags.json) printJson({ ...r, writes });
      else {
        stdout(renderCompletedWrites(writes));
        stdout(r.recovered.length === 0 ? "no interrupted review\n" : `completed ${r.recovered.join(", ")}\n${r.files.map((f) => `${f.action === "written" ? "wrote  " : "deleted"} ${shownPath(f.path)}\n`).join("")}`);
      }
      return 0;
    },
  },
  cleanup: {
    flags: { resolved: { kind: "bool" }, "older-than": { kind: "string" } },
    run: async (ws, store, pos, flags) => {
      if (pos.length > 0) throw new UsageError("cleanup takes no arguments");
      if (!flags.resolved) throw new UsageError("cleanup needs --resolved (only fully reviewed conversations are removed)");
      let olderThanMs: number | undefined;
      if (flags["older-than"] !== undefined) {
        const d = parseDuration(String(flags["older-than"]));
        if (d === null) throw new UsageError("--older-than takes a duration such as 30d, 12h, 90m, 2w");
        olderThanMs = d;
      }
      const r = await cleanupHistory(ws, store, olderThanMs === undefined ? {} : { olderThanMs });
      if (flags.json) printJson(r);
      else stdout(renderCleanup(r));
      return 0;
    },
  },
};

async function review(action: "accept" | "reject", ws: Workspace, store: FsHistoryStore, pos: string[], flags: Flags): Promise<number> {
  const conv = str(flags.conv);
  if (conv !== undefined && pos.length > 0) throw new UsageError(`${action} takes EDIT_IDs or --conv ID, not both`);
  if (conv === undefined && pos.length === 0) throw new UsageError(`${action} needs EDIT_ID... or --conv ID`);
  const target = conv !== undefined ? { conversationId: conv } : { editIds: pos };
  if (flags["dry-run"]) {
    const p = await previewReview(ws, store, { action, ...target, cascade: flags.cascade === true, force: flags.force === true });
    if (flags.json) printJson(p);
    else stdout(renderPreview(p, painter(1)));
    return 0;
  }
  const shown: Shown = { external: false };
  const r = await withExplainedErrors(flags, shown, () =>
    reviewEdits(ws, store, {
      action,
      ...target,
      cascade: flags.cascade === true,
      ...discardPolicy(flags, shown),
    }),
  );
  if (flags.json) printJson(r);
  else stdout(renderReview(r, painter(1)));
  return 0;
}

/** What one command has shown a person already: the outside changes shown at the prompt are not shown again. */
interface Shown {
  external: boolean;
}

function discardPolicy(flags: Flags, shown: Shown): DiscardPolicy {
  const policy: DiscardPolicy = { force: flags.force === true };
  if (!flags.json && !policy.force && interactive()) {
    policy.confirmDiscard = async (changes: ExternalChange[]) => {
      stderr(renderExternal(changes, painter(2)));
      shown.external = true;
      return askYesNo(`Discard the outside changes to ${changes.map((c) => c.path).join(", ")} and continue? [y/N] `);
    };
  }
  return policy;
}

/** How a person resolves a refusal from the command line, by the resolution the review offers. */
const RESOLUTION_WORDS: Record<string, string> = {
  discard_outside_changes: "Review the diff, then re-run with --force to discard those changes",
  cascade: "Re-run with --cascade to reject them too",
};

/**
 * On a refusal, people see the diff or the dependent edits before the
 * one-line error, and the error names the flag that resolves it.
 */
async function withExplainedErrors<T>(flags: Flags, shown: Shown, fn: () => Promise<T>): Promise<T> {
  try {
    return await fn();
  } catch (err) {
    if (!(err instanceof WorksnapError)) throw err;
    if (!flags.json) {
      const p = painter(2);
      if (err.details.reason === "external_modification") {
        if (!shown.external) stderr(renderExternal(err.details.changes as ExternalChange[], p));
      } else if (Array.isArray(err.details.conflicts)) stderr(renderConflicts(err.details.conflicts as Conflict[], p));
    }
    const words = RESOLUTION_WORDS[String(err.details.resolution)];
    throw words ? new WorksnapError(err.code, `${err.message}. ${words}`, err.details) : err;
  }
}

function str(v: unknown): string | undefined {
  return v === undefined ? undefined : String(v);
}

export async function cmdHistory(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const sub = SUBCOMMANDS[name as string];
  if (!sub) throw new UsageError(`unknown history command ${name}`);
  const { flags, positionals } = parseArgv(rest, { ...COMMON, ...sub.flags });
  const ws = openWorkspace((flags.root as string | undefined) ?? process.cwd());
  try {
    const store = new FsHistoryStore(ws.repo.stateDir);
    // A write a crash left half recorded is completed before anything is shown or reviewed.
    const completed = await completeInterruptedWritesNow(ws, store);
    if (completed.length > 0 && name !== "recover" && !flags.json) stderr(renderCompletedWrites(completed));
    return await sub.run(ws, store, positionals, flags, completed);
  } finally {
    closeWorkspace(ws);
  }
}
