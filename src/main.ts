#!/usr/bin/env bun
import { basename } from "node:path";
import { UsageError } from "./cli/args";
import { HISTORY_HELP, cmdHistory } from "./cli/commands/history";
import { SERVE_HELP, cmdServe } from "./cli/commands/serve";
import { SNAPSHOT_HELP, cmdSnapshot, wantsJson } from "./cli/commands/snapshot";
import { reportError } from "./cli/output";
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

type Command = (argv: string[]) => Promise<number>;

const COMMANDS: Record<string, { run: Command; help: string }> = {
  serve: { run: cmdServe, help: SERVE_HELP },
  snapshot: { run: cmdSnapshot, help: SNAPSHOT_HELP },
  history: { run: cmdHistory, help: HISTORY_HELP },
};

export async function main(argv: string[], invokedAs: string): Promise<number> {
  if (invokedAs === "mcpdiff") argv = ["history", ...argv];
  const [name, ...rest] = argv;
  if (name === "--version" || name === "-V") {
    process.stdout.write(`worksnap ${VERSION}\n`);
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
  const cmd = COMMANDS[name];
  try {
    if (!cmd) throw new UsageError(`unknown command ${name}`);
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
process.exit(code);
