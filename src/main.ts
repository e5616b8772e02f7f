#!/usr/bin/env bun
import { basename } from "node:path";
import { UsageError } from "./cli/args";
import { reportError } from "./cli/output";
import { nativeSummary } from "./repo/native";
import { VERSION } from "./version";

const HELP = `worksnap ${VERSION}: deterministic snapshots, leased work-tree access, byte-exact
patching and reviewable edit history for coding agents.

Usage:
  worksnap serve [--root DIR]          MCP server over stdio (for MCP hosts)
  worksnap snapshot <command> ...      create, info, log, list, file, grep, changes,
                                       diff, export, import
  worksnap history <command> ...       review agent edits: status, show, accept,
                                       reject, recover, cleanup (also: mcpdiff)
  worksnap --version | --help

Run "worksnap <command> --help" for details.
`;

interface CommandModule {
  run: (argv: string[]) => Promise<number>;
  help: string;
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
    return { run: m.cmdSnapshot, help: m.SNAPSHOT_HELP };
  },
  history: async () => {
    const m = await import("./cli/commands/history");
    return { run: m.cmdHistory, help: m.HISTORY_HELP };
  },
};

function wantsJson(argv: string[]): boolean {
  return argv.includes("--json");
}

export async function main(argv: string[], invokedAs: string): Promise<number> {
  if (invokedAs === "mcpdiff") argv = ["history", ...argv];
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-V") {
    process.stdout.write(`worksnap ${VERSION}\n${nativeSummary()}\n`);
    return 0;
  }
  if (name === "--help" || name === "-h" || name === "help") {
    process.stdout.write(HELP);
    return 0;
  }
  if (!name) {
    process.stderr.write(HELP);
    return 2;
  }
  const load = COMMANDS[name];
  try {
    if (!load) throw new UsageError(`unknown command ${name}`);
    const cmd = await load();
    if (name !== "snapshot" && (rest.includes("--help") || rest.includes("-h"))) {
      process.stdout.write(cmd.help);
      return 0;
    }
    return await cmd.run(rest);
  } catch (err) {
    return reportError(err, wantsJson(rest));
  }
}

// A compiled binary sees its own name in argv0 (argv[1] is its embedded entry point); `bun src/main.ts` in argv[1].
const code = await main(process.argv.slice(2), [process.argv0, process.argv[1] ?? ""].map((a) => basename(a)).includes("mcpdiff") ? "mcpdiff" : "worksnap");
// process.exit drops what a pipe has not taken yet (a --json answer over 64 KiB was cut off): stdout and stderr are
// ended first, which resolves once everything is handed to the kernel (or the reader has gone).
await Promise.all(
  [process.stdout, process.stderr].map(
    (stream) =>
      new Promise<void>((resolve) => {
        stream.once("error", () => resolve());
        stream.end(() => resolve());
      }),
  ),
);
process.exit(code);
