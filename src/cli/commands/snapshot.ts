import { decodeContent } from "../../core/binary";
import { createSnapshot } from "../../ops/snapshot/create";
import { readFile } from "../../ops/snapshot/file";
import { listSnapshots, snapshotInfo } from "../../ops/snapshot/info";
import { listEntries } from "../../ops/snapshot/list";
import { closeWorkspace, openWorkspace, type Workspace } from "../../ops/workspace";
import { COMPARE_HELP, COMPARE_SUBCOMMANDS } from "./snapshot-compare";
import { UsageError, intFlag, parseArgv, type FlagSpec } from "../args";
import { printJson, progressBar, stderr, stdout, warnSkipped, warnUnreadable } from "../output";
import { shownPath } from "../shown-path";

export const SNAPSHOT_HELP = `worksnap snapshot <command> [--root DIR] [--json]

  create [PATH...]               capture PATHs (default: the whole tree); prints the snapshot id
  info ID                        fingerprint, creation time and stats of a snapshot
  log [--limit N]                stored snapshots, newest first
  list [PATH] [--snapshot ID] [--recursive] [--glob GLOB] [--limit N] [--cursor C]
                                 entries under PATH, from a snapshot or the live tree;
                                 --glob: files matching it at any depth ("*.test.ts")
  file PATH [--snapshot ID] [--start-line N] [--end-line N]
                                 a file's content (raw bytes on stdout)
${COMPARE_HELP}
ID is sha256:<hex> or a unique prefix of at least 8 hex digits.
Exit codes: 0 ok, 1 user error, 2 usage, 70 internal.
`;

const COMMON: FlagSpec = { root: { kind: "string" }, json: { kind: "bool" } };

/** What `snapshot file` prints at most without a line range (an MCP answer carries FILE_INLINE_CAP). */
const CLI_FILE_MAX = 64 * 1024 * 1024;

type Sub = (ws: Workspace, positionals: string[], flags: Record<string, unknown>) => Promise<void>;

const SUBCOMMANDS: Record<string, { flags: FlagSpec; run: Sub }> = {
  ...COMPARE_SUBCOMMANDS,
  create: {
    flags: {},
    run: async (ws, pos, flags) => {
      const result = await createSnapshot(ws, { paths: pos.length > 0 ? pos : ["."], onProgress: flags.json ? undefined : progressBar("hashing") });
      if (flags.json) return printJson(result);
      stdout(`${result.snapshot_id}\n`);
      warnSkipped(result.skipped);
      warnUnreadable(result);
    },
  },
  info: {
    flags: {},
    run: async (ws, pos, flags) => {
      const result = snapshotInfo(ws, { snapshot_id: one(pos, "ID") });
      if (flags.json) return printJson(result);
      const fp = result.fingerprint;
      stdout(
        [
          `snapshot    ${result.snapshot_id}`,
          `created     ${result.created_at}`,
          `files       ${result.manifest_stats.files}`,
          `bytes       ${result.manifest_stats.bytes}`,
          ...(result.manifest_stats.unreadable ? [`unreadable  ${result.manifest_stats.unreadable} (skipped: the snapshot is not a full capture)`] : []),
          `paths       ${result.paths.join(" ")}`,
          `head_oid    ${fp.head_oid || "(unborn or not git)"}`,
          `index_oid   ${fp.index_oid || "(none)"}`,
          `status_hash ${fp.status_hash}`,
          "",
        ].join("\n"),
      );
    },
  },
  log: {
    flags: { limit: { kind: "string" } },
    run: async (ws, pos, flags) => {
      if (pos.length > 0) throw new UsageError("log takes no arguments");
      const result = listSnapshots(ws, intFlag(flags.limit, "limit") ?? 50);
      if (flags.json) return printJson(result);
      stdout(result.snapshots.map((s) => `${s.snapshot_id.slice(0, 19)}  ${s.created_at}  ${String(s.files).padStart(7)} files  ${s.paths.join(" ")}\n`).join(""));
    },
  },
  list: {
    flags: {
      snapshot: { kind: "string" },
      recursive: { kind: "bool", short: "r" },
      glob: { kind: "string" },
      limit: { kind: "string" },
      cursor: { kind: "string" },
    },
    run: async (ws, pos, flags) => {
      if (pos.length > 1) throw new UsageError("list takes at most one PATH");
      const args = {
        mode: (flags.snapshot ? "snapshot" : "worktree") as "snapshot" | "worktree",
        snapshot_id: flags.snapshot as string | undefined,
        path: pos[0] ?? ".",
        recursive: flags.recursive === true,
        glob: flags.glob as string | undefined,
        limit: intFlag(flags.limit, "limit"),
        cursor: flags.cursor as string | undefined,
      };
      if (flags.json) return printJson(await listEntries(ws, args));
      const line = (e: Awaited<ReturnType<typeof listEntries>>["entries"][number]) => {
        const size = e.type === "dir" ? "-" : String(e.size ?? "");
        return `${e.type.padEnd(7)} ${size.padStart(10)}  ${shownPath(e.type === "dir" ? `${e.path}/` : e.path)}\n`;
      };
      // every page (one write each), unless --limit asks for one
      let cursor = args.cursor;
      do {
        const result = await listEntries(ws, { ...args, cursor });
        stdout(result.entries.map(line).join(""));
        warnUnreadable(result);
        cursor = args.limit === undefined ? result.cursor : undefined;
        if (result.cursor && !cursor) stderr(`(more entries; continue with --cursor ${result.cursor})\n`);
      } while (cursor);
    },
  },
  file: {
    flags: { snapshot: { kind: "string" }, "start-line": { kind: "string" }, "end-line": { kind: "string" } },
    run: async (ws, pos, flags) => {
      const result = await readFile(ws, {
        mode: flags.snapshot ? "snapshot" : "worktree",
        snapshot_id: flags.snapshot as string | undefined,
        path: one(pos, "PATH"),
        start_line: intFlag(flags["start-line"], "start-line"),
        end_line: intFlag(flags["end-line"], "end-line"),
        // a person's terminal or pipe takes more than a model's answer
        maxContent: CLI_FILE_MAX,
      });
      if (flags.json) return printJson(result);
      stdout(decodeContent(result.content));
    },
  },
};

function one(pos: string[], what: string): string {
  if (pos.length !== 1) throw new UsageError(`expected exactly one ${what}`);
  return pos[0] as string;
}

export async function cmdSnapshot(argv: string[]): Promise<number> {
  const [name, ...rest] = argv;
  const sub = SUBCOMMANDS[name as string];
  if (!sub) throw new UsageError(`unknown snapshot command ${name}`);
  const { flags, positionals } = parseArgv(rest, { ...COMMON, ...sub.flags });
  const ws = openWorkspace((flags.root as string | undefined) ?? process.cwd());
  try {
    await sub.run(ws, positionals, flags);
  } finally {
    closeWorkspace(ws);
  }
  return 0;
}

export function wantsJson(argv: string[]): boolean {
  return argv.includes("--json");
}
