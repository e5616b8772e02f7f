#!/usr/bin/env bun
import { realpathSync, statSync } from "node:fs";
import { basename, resolve } from "node:path";
import { UsageError } from "./cli/args";
import { reportError, stderr, stdout } from "./cli/output";
import { nativeSummary } from "./repo/native";
import { STATE_FORMAT } from "./repo/state-format";
import { BUILD, VERSION } from "./version";

const HELP = `worksnap ${VERSION}: deterministic snapshots, leased work-tree access, byte-exact
patching and reviewable edit history for coding agents.

Usage:
  worksnap serve [--root DIR]          MCP server over stdio (for MCP hosts), or over
               [--http [HOST:]PORT]    Streamable HTTP with a bearer token
  worksnap snapshot <command> ...      create, info, log, list, file, grep, changes,
                                       diff, export, import
  worksnap apply [PATCH]               apply a unified diff, all or nothing (recorded)
  worksnap history <command> ...       review agent edits: review (a local page),
                                       status, show, accept, reject, recover,
                                       cleanup (also: mcpdiff)
  worksnap task <command> ...          the task layer: start, context, check, end,
                                       list, diff, restore
  worksnap index <command> ...         the grep index: build, status, clear
  worksnap migrate [--check]           bring .mcp/ to this version's state format
  worksnap gc [--dry-run]              prune .mcp/: exports, unreferenced blobs
  worksnap --version | --help

Run "worksnap <command> --help" for details.
`;

interface CommandModule {
  run: (argv: string[]) => Promise<number>;
  help: string;
  /** A command group that needs a subcommand: alone, it prints its help as a usage error. */
  needsArgs?: boolean;
}

/**
 * Commands load on demand: a CLI call evaluates only its own command's module
 * graph (the MCP SDK is loaded by `serve` alone), which keeps start-up short.
 */
const COMMANDS: Record<string, () => Promise<CommandModule>> = {
  serve: async () => {
    const m = await import("./cli/commands/serve");
    return { run: m.cmdServe, help: m.SERVE_HELP };
  },
  snapshot: async () => {
    const m = await import("./cli/commands/snapshot");
    return { run: m.cmdSnapshot, help: m.SNAPSHOT_HELP, needsArgs: true };
  },
  "__hand-off": async () => {
    const m = await import("./cli/hand-off");
    return { run: m.cmdHandOff, help: "" };
  },
  apply: async () => {
    const m = await import("./cli/commands/apply");
    return { run: m.cmdApply, help: m.APPLY_HELP };
  },
  history: async () => {
    const m = await import("./cli/commands/history");
    return { run: m.cmdHistory, help: m.HISTORY_HELP, needsArgs: true };
  },
  gc: async () => {
    const m = await import("./cli/commands/gc");
    return { run: m.cmdGc, help: m.GC_HELP };
  },
  task: async () => {
    const m = await import("./cli/commands/task");
    return { run: m.cmdTask, help: m.TASK_HELP };
  },
  index: async () => {
    const m = await import("./cli/commands/grep-index");
    return { run: m.cmdIndex, help: m.INDEX_HELP };
  },
  migrate: async () => {
    const m = await import("./cli/commands/migrate");
    return { run: m.cmdMigrate, help: m.MIGRATE_HELP };
  },
};

/** `--version`: what a bug report needs, one fact a line, the version alone on the first. */
function versionText(): string {
  return `worksnap ${VERSION}\ncommit: ${BUILD.commit}\ntarget: ${BUILD.target}\n${nativeSummary()}\nstate format: ${STATE_FORMAT}\n`;
}

function wantsJson(argv: string[]): boolean {
  return argv.includes("--json");
}

/** The root a command works on (`--root DIR` or the current directory), canonical, for showing paths relative to it. */
function rootOf(argv: string[]): string | null {
  let dir = process.cwd();
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i] as string;
    if (a === "--") break;
    if (a === "--root" && argv[i + 1] !== undefined) dir = argv[i + 1] as string;
    else if (a.startsWith("--root=")) dir = a.slice("--root=".length);
  }
  try {
    const root = realpathSync(resolve(dir));
    // a --root that is no directory (/dev/null) is named as given, not as "."
    return statSync(root).isDirectory() ? root : null;
  } catch {
    return null;
  }
}

/** The options before a `--` (after it, everything is a positional: `grep -- --help` searches for "--help"). */
function options(argv: string[]): string[] {
  const end = argv.indexOf("--");
  return end < 0 ? argv : argv.slice(0, end);
}

/**
 * `--version` and `--help` work on every command and subcommand, under either
 * name (`worksnap history status --help`, `mcpdiff --version`): the version,
 * or the help of the command named (the top help when none is).
 */
export async function main(argv: string[], invokedAs: string): Promise<number> {
  if (invokedAs === "mcpdiff") argv = ["history", ...argv];
  const [name, ...rest] = argv;
  const given = options(argv);
  try {
    if (given.includes("--version") || given.includes("-V")) {
      stdout(versionText());
      return 0;
    }
    if (name === "--help" || name === "-h" || name === "help") {
      stdout(HELP);
      return 0;
    }
    if (!name) {
      stderr(HELP);
      return 2;
    }
    const load = COMMANDS[name];
    if (!load) throw new UsageError(`unknown command ${name}`);
    const jit = await import("./cli/one-shot-jit");
    jit.startJitPolicy(name);
    const cmd = await load();
    if (rest.length === 0 && cmd.needsArgs) {
      stderr(cmd.help);
      return 2;
    }
    if (given.includes("--help") || given.includes("-h") || rest[0] === "help") {
      stdout(cmd.help);
      return 0;
    }
    jit.decideJitPolicy(name !== "serve");
    return await cmd.run(rest);
  } catch (err) {
    return reportError(err, wantsJson(rest), rootOf(rest));
  }
}

// A compiled binary sees its own name in argv0 (argv[1] is its embedded entry point); `bun src/main.ts` in argv[1].
// A promise that fails before its caller awaits it is not a reason to end the process (a server's other sessions,
// every request answered): it is said on stderr, and the caller that awaits it later handles the failure.
process.on("unhandledRejection", (reason) => {
  stderr(`worksnap: a failure came before its handler was attached (handled later, or a bug): ${reason instanceof Error ? reason.message : String(reason)}\n`);
});

// Every write of the CLI is complete when it returns (cli/output.ts), and `serve` flushes its answers
// before it returns: nothing is left in a buffer that exiting would drop. (No top-level await: the
// executable's bundle is CommonJS, scripts/compile.ts.)
void main(process.argv.slice(2), [process.argv0, process.argv[1] ?? ""].map((a) => basename(a)).includes("mcpdiff") ? "mcpdiff" : "worksnap").then((code) => process.exit(code));
