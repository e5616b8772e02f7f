"use strict";
// Runs the platform's worksnap executable with this process's arguments, stdio, signals and exit status, so
// `npx worksnap ...` and an MCP host's `"command": "npx"` behave as the executable itself does.
const fs = require("node:fs");
const os = require("node:os");
const { spawn } = require("node:child_process");
const { resolveBinary } = require("./platform.js");

// (SIGUSR1 is node's own: it starts the inspector)
const FORWARDED = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR2"];

function run(prefixArgs) {
  const found = resolveBinary();
  if (found.error) {
    process.stderr.write(`worksnap: ${found.error}\n`);
    process.exit(1);
  }
  ensureExecutable(found.path);
  const child = spawn(found.path, prefixArgs.concat(process.argv.slice(2)), { stdio: "inherit" });
  const handlers = new Map();
  for (const signal of FORWARDED) {
    const handler = () => {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    };
    handlers.set(signal, handler);
    process.on(signal, handler);
  }
  child.on("error", (err) => {
    process.stderr.write(`worksnap: cannot run ${found.path}: ${err.message}\n`);
    process.exit(1);
  });
  child.on("exit", (code, signal) => {
    for (const [s, h] of handlers) process.removeListener(s, h);
    if (signal) {
      // die of the same signal, so whoever started us sees what happened to the executable; node ignores a few
      // (SIGPIPE), and then the shell's convention stands in
      process.kill(process.pid, signal);
      setImmediate(() => process.exit(128 + (os.constants.signals[signal] || 0)));
      return;
    }
    process.exit(code === null ? 1 : code);
  });
}

/** npm keeps the executable bit of a packed file, but a copy made by other tools may lose it. */
function ensureExecutable(file) {
  try {
    fs.accessSync(file, fs.constants.X_OK);
  } catch {
    try {
      fs.chmodSync(file, 0o755);
    } catch {
      // reported by spawn's error if it still cannot run
    }
  }
}

module.exports = { run };
