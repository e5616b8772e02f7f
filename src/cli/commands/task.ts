import { WorksnapError } from "../../core/errors";
import { publicError } from "../../core/public-error";
import { CHECK_MODES, type CheckMode, runCheck } from "../../ops/task/check";
import { taskContext } from "../../ops/task/context";
import { OUTCOMES, type Outcome, endTask } from "../../ops/task/end";
import { diffSnapshots, listTaskSnapshots } from "../../ops/task/fix";
import { renderCheck, renderContext, renderDiff, renderEnd, renderError, renderList, renderRestore, renderStart } from "../../ops/task/render";
import { restoreSnapshot } from "../../ops/task/restore";
import { startTask } from "../../ops/task/start";
import { type WireResponse, renderWire } from "../../ops/task/wire";
import { closeWorkspace, openWorkspace, type Workspace } from "../../ops/workspace";
import { type FlagSpec, UsageError, parseArgv } from "../args";
import { EXIT, stdout } from "../output";

export const TASK_HELP = `worksnap task <command> [--root DIR] [--compact]

The task layer from the command line; answers are the wire responses the MCP
tools give (snap, check, snap_end, snap_fix): a 🧢|TYPE|... line, ---, a summary.
  start TITLE [--file PATH]... [--keyword WORD]...
                                 begin a task: snapshot of the files plus every dirty file
  context                        the newest active task against its start
  check [MODE] [--task ID] [--file PATH]...
                                 ${CHECK_MODES.join("|")} (default full);
                                 exits 1 when the check fails
  end ID [--outcome completed|abandoned|blocked] [--learning TEXT]...
  list                           task snapshots, newest first
  diff ID [WITH]                 snapshot ID against WITH, or the work tree
  restore ID [--dry-run]         put the work tree back (recorded in the edit history);
                                 ID: a snapshot id, or a task id (task_<n>) for its start
Check commands come from the committed configuration (worksnap.json "checks",
else detected from package.json, Makefile, tsconfig.json, Cargo.toml, go.mod,
Python tool configuration), never from arguments.
Exit codes: 0 ok, 1 user error or failed check, 2 usage, 70 internal.
`;

const COMMON: FlagSpec = { root: { kind: "string" }, compact: { kind: "bool" } };

type Sub = (ws: Workspace, pos: string[], flags: Record<string, unknown>) => Promise<{ wire: WireResponse; failed?: boolean }>;

const list = (v: unknown) => (v as string[] | undefined) ?? [];

const SUBCOMMANDS: Record<string, { flags: FlagSpec; run: Sub }> = {
  start: {
    flags: { file: { kind: "multi" }, keyword: { kind: "multi" } },
    run: async (ws, pos, flags) => {
      if (pos.length !== 1) throw new UsageError("start needs one TITLE (quote it)");
      return { wire: renderStart(await startTask(ws, { task: pos[0], files: flags.file === undefined ? undefined : list(flags.file), keywords: list(flags.keyword) })) };
    },
  },
  context: {
    flags: {},
    run: async (ws, pos) => {
      if (pos.length > 0) throw new UsageError("context takes no argument");
      return { wire: renderContext(await taskContext(ws, {})) };
    },
  },
  check: {
    flags: { task: { kind: "string" }, file: { kind: "multi" } },
    run: async (ws, pos, flags) => {
      const mode = (pos[0] ?? "full") as CheckMode;
      if (!CHECK_MODES.includes(mode) || pos.length > 1) throw new UsageError(`check takes one MODE: ${CHECK_MODES.join(", ")}`);
      const r = await runCheck(ws, { mode, taskId: flags.task as string | undefined, files: flags.file === undefined ? undefined : list(flags.file) });
      return { wire: renderCheck(r), failed: r.status === "fail" };
    },
  },
  end: {
    flags: { outcome: { kind: "string" }, learning: { kind: "multi" } },
    run: async (ws, pos, flags) => {
      if (pos.length !== 1) throw new UsageError("end needs the task ID");
      const outcome = flags.outcome as Outcome | undefined;
      if (outcome !== undefined && !OUTCOMES.includes(outcome)) throw new UsageError(`--outcome must be ${OUTCOMES.join(", ")}`);
      return { wire: renderEnd(await endTask(ws, { taskId: pos[0] as string, outcome, learnings: list(flags.learning) })) };
    },
  },
  list: {
    flags: {},
    run: async (ws) => ({ wire: renderList(listTaskSnapshots(ws)) }),
  },
  diff: {
    flags: {},
    run: async (ws, pos) => {
      if (pos.length < 1 || pos.length > 2) throw new UsageError("diff needs ID and optionally WITH");
      return { wire: renderDiff(await diffSnapshots(ws, { id: pos[0], diffWith: pos[1] })) };
    },
  },
  restore: {
    flags: { "dry-run": { kind: "bool" } },
    run: async (ws, pos, flags) => {
      if (pos.length !== 1) throw new UsageError("restore needs the snapshot ID");
      return { wire: renderRestore(await restoreSnapshot(ws, { id: pos[0], dryRun: flags["dry-run"] === true })) };
    },
  },
};

export async function cmdTask(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  if (!name || name === "--help" || name === "-h") {
    stdout(TASK_HELP);
    return name ? EXIT.ok : EXIT.usage;
  }
  const sub = SUBCOMMANDS[name];
  if (!sub) throw new UsageError(`unknown task command ${name}`);
  const { flags, positionals } = parseArgv(rest, { ...COMMON, ...sub.flags });
  const compact = flags.compact === true;
  const ws = openWorkspace((flags.root as string | undefined) ?? process.cwd());
  try {
    const out = await sub.run(ws, positionals, flags);
    stdout(`${renderWire(out.wire, compact)}\n`);
    return out.failed ? EXIT.user : EXIT.ok;
  } catch (err) {
    if (!(err instanceof WorksnapError)) throw err;
    // The same wire error the MCP tools answer, on stdout; the exit code says what kind.
    stdout(`${renderWire(renderError(publicError(err, { root: ws.repo.root, foreignPaths: "keep" })), compact)}\n`);
    return err.code === "INTERNAL" ? EXIT.internal : err.code === "BUSY" ? EXIT.busy : EXIT.user;
  } finally {
    closeWorkspace(ws);
  }
}
