import { decodeContent } from "../../core/binary";
import { createSnapshot } from "../../ops/snapshot/create";
import { readFile } from "../../ops/snapshot/file";
import { listSnapshots, snapshotInfo } from "../../ops/snapshot/info";
import { listEntries } from "../../ops/snapshot/list";
import { closeWorkspace, openWorkspace, type Workspace } from "../../ops/workspace";
import { COMPARE_HELP, COMPARE_SUBCOMMANDS } from "./snapshot-compare";
import { UsageError, intFlag, parseArgv, type FlagSpec } from "../args";
import { printJson, progressBar, stderr, stdout } from "../output";

export const SNAPSHOT_HELP = `worksnap snapshot <command> [--root DIR] [--json]

  create [PATH...]               capture PATHs (default: the whole tree); prints the snapshot id
  info ID                        fingerprint, creation time and stats of a snapshot
  log [--limit N]                stored snapshots, newest first
  list [PATH] [--snapshot ID] [--recursive] [--limit N]
                                 entries under PATH, from a snapshot or the live tree
  file PATH [--snapshot ID] [--start-line N] [--end-line N]
                                 a file's content (raw bytes on stdout)
${COMPARE_HELP}
ID is sha256:<hex> or a unique prefix of at least 8 hex digits.
Exit codes: 0 ok, 1 user error, 2 usage, 70 internal.
`;

const COMMON: FlagSpec = { root: { kind: "string" }, json: { kind: "bool" } };

type Sub = (ws: Workspace, positionals: string[], flags: Record<string, unknown>) => Promise<void>;

const SUBCOMMANDS: Record<string, { flags: FlagSpec; run: Sub }> = {
  ...COMPARE_SUBCOMMANDS,
  create: {
    flags: {},
    run: async (ws, pos, flags) => {
      const result = await createSnapshot(ws, { paths: pos.length > 0 ? pos : ["."], onProgress: flags.json ? undefined : progressBar("hashing") });
      if (flags.json) printJson(result);
      else stdout(`${result.snapshot_id}\n`);
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
    flags: { snapshot: { kind: "string" }, recursive: { kind: "bool", short: "r" }, limit: { kind: "string" } },
    run: async (ws, pos, flags) => {
      if (pos.length > 1) throw new UsageError("list takes at most one PATH");
      const result = await listEntries(ws, {
        mode: flags.snapshot ? "snapshot" : "worktree",
        snapshot_id: flags.snapshot as string | undefined,
        path: pos[0] ?? ".",
        recursive: flags.recursive === true,
        limit: intFlag(flags.limit, "limit"),
      });
      if (flags.json) return printJson(result);
      const line = (e: (typeof result.entries)[number]) => {
        const size = e.type === "dir" ? "-" : String(e.size ?? "");
        return `${e.type.padEnd(7)} ${size.padStart(10)}  ${e.path}${e.type === "dir" ? "/" : ""}\n`;
      };
      stdout(result.entries.map(line).join(""));
      if (result.truncated) stderr(`(${result.total - result.entries.length} more; raise --limit)\n`);
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
  if (!name || name === "--help" || name === "-h" || name === "help") {
    stdout(SNAPSHOT_HELP);
    return name ? 0 : 2;
  }
  const sub = SUBCOMMANDS[name];
  if (!sub) throw new UsageError(`unknown snapshot command ${name}`);
  if (rest.includes("--help") || rest.includes("-h")) {
    stdout(SNAPSHOT_HELP);
    return 0;
  }
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
