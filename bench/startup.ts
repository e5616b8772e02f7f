// Benchmark: start-up, from spawning the executable to the MCP `initialize` reply on stdout (what an MCP host
// waits for), median over many runs, and `--version` to exit. Build variants of the executable (Bun's minify
// and bytecode options) are compiled into a temp dir from the same source and measured in the same rounds, so
// the choice in scripts/compile.ts (STARTUP_OPTIONS) rests on figures; each executable's size is printed.
// Anchors, in the same rounds: the floor, a compiled Bun program that answers `initialize` by hand (Bun's own
// start); a compiled minimal MCP server on the SDK's Server and stdio transport (both built with the current
// options); the npm launcher
// (node npm/worksnap/bin/worksnap.js) in front of worksnap, which `npx worksnap` adds to.
//
//   node_modules/.bin/bun bench/startup.ts [--runs N] [--only current]   (npm run bench:startup)
import { mkdtempSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildNative } from "../scripts/build-native.ts";
import { buildReviewPage } from "../scripts/build-page.ts";
import { STARTUP_OPTIONS, compileWorksnap } from "../scripts/compile.ts";
import { HOST_TARGET } from "../scripts/targets.ts";
import { argValue, fmtBytes, fmtMs, fmtRatio, loadLine, machineLine, median, runMain, table } from "./lib.ts";

const args = process.argv.slice(2);
const runs = Number(argValue(args, "--runs") ?? 40);
const only = argValue(args, "--only");
const keep = (v: Variant) => !only || (only === "current" ? v.name.endsWith("(current)") : v.name === only);
const ROOT = join(import.meta.dir, "..");
const INITIALIZE = `${JSON.stringify({ jsonrpc: "2.0", id: 0, method: "initialize", params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "bench", version: "0" } } })}\n`;

interface Variant {
  name: string;
  bytecode: boolean;
  minifyIdentifiers: boolean;
  format: "esm" | "cjs";
}

const OPTIONS: Omit<Variant, "name">[] = [
  { bytecode: false, minifyIdentifiers: false, format: "cjs" },
  { bytecode: true, minifyIdentifiers: false, format: "esm" },
  { bytecode: true, minifyIdentifiers: false, format: "cjs" },
  { bytecode: true, minifyIdentifiers: true, format: "cjs" },
];
const isCurrent = (o: Omit<Variant, "name">) =>
  o.bytecode === STARTUP_OPTIONS.bytecode && o.minifyIdentifiers === STARTUP_OPTIONS.minifyIdentifiers && o.format === STARTUP_OPTIONS.format;
const VARIANTS: Variant[] = OPTIONS.map((o) => ({
  ...o,
  name: `${o.bytecode ? "bytecode" : "no bytecode"}, identifiers ${o.minifyIdentifiers ? "minified" : "kept"}, ${o.format === "esm" ? "ES module" : "CommonJS"}${isCurrent(o) ? " (current)" : ""}`,
}));

const FLOOR = `
const reader = Bun.stdin.stream().getReader();
let buf = "";
for (;;) {
  const { value, done } = await reader.read();
  if (done) break;
  buf += new TextDecoder().decode(value);
  if (buf.includes("\\n")) break;
}
const req = JSON.parse(buf.slice(0, buf.indexOf("\\n")));
process.stdout.write(JSON.stringify({ jsonrpc: "2.0", id: req.id, result: { protocolVersion: "2025-06-18", capabilities: {}, serverInfo: { name: "floor", version: "0" } } }) + "\\n");
`;

const SDK_SERVER = `
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { StdioServerTransport } from "@modelcontextprotocol/sdk/server/stdio.js";
const server = new Server({ name: "minimal", version: "0" }, { capabilities: { tools: {} } });
await server.connect(new StdioServerTransport());
`;

/** Milliseconds from spawn to the first line on stdout, after writing `initialize`; then stdin closes. */
async function timeToInitialize(cmd: string[], cwd: string, env?: Record<string, string>): Promise<number> {
  const t0 = Bun.nanoseconds();
  const p = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdin: "pipe", stdout: "pipe", stderr: "ignore" });
  p.stdin.write(INITIALIZE);
  p.stdin.flush();
  const reader = p.stdout.getReader();
  let text = "";
  while (!text.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) throw new Error(`${cmd.join(" ")} closed stdout before answering`);
    text += new TextDecoder().decode(value);
  }
  const ms = (Bun.nanoseconds() - t0) / 1e6;
  if (!text.includes('"result"')) throw new Error(`${cmd.join(" ")} answered ${text.slice(0, 300)}`);
  p.stdin.end();
  reader.releaseLock();
  await p.exited;
  return ms;
}

async function timeToExit(cmd: string[], cwd: string, env?: Record<string, string>): Promise<number> {
  const t0 = Bun.nanoseconds();
  const p = Bun.spawn(cmd, { cwd, env: { ...process.env, ...env }, stdin: "ignore", stdout: "ignore", stderr: "ignore" });
  const code = await p.exited;
  if (code !== 0) throw new Error(`${cmd.join(" ")} exited ${code}`);
  return (Bun.nanoseconds() - t0) / 1e6;
}

async function main(): Promise<number> {
  const work = mkdtempSync(join(tmpdir(), "bench-startup-"));
  try {
    const repo = join(work, "repo");
    Bun.spawnSync(["git", "init", "-q", repo]);
    writeFileSync(join(repo, "a.txt"), "a\n");
    const native = buildNative();
    await buildReviewPage();
    if (!native.ok) console.log(`note: native module not built (${native.reason}); variants run their TypeScript paths`);
    const nativeNote = native.ok ? "" : `not built: ${native.reason}`;
    const contenders: { name: string; cmd: string[]; env?: Record<string, string>; size?: number; version?: string[] }[] = [];
    for (const v of VARIANTS.filter(keep)) {
      const outfile = join(work, v.name.replace(/\W+/g, "-"));
      await compileWorksnap({ target: HOST_TARGET, outfile, nativeNote, bytecode: v.bytecode, minifyIdentifiers: v.minifyIdentifiers, format: v.format });
      contenders.push({ name: `worksnap, ${v.name}`, cmd: [outfile, "serve", "--root", repo], size: statSync(outfile).size, version: [outfile, "--version"] });
    }
    const current = contenders.find((c) => c.name.endsWith("(current)")) ?? contenders[0]!;
    contenders.push({ name: "npm launcher + worksnap (current)", cmd: ["node", join(ROOT, "npm/worksnap/bin/worksnap.js"), "serve", "--root", repo], env: { WORKSNAP_BINARY: current.cmd[0]! }, version: ["node", join(ROOT, "npm/worksnap/bin/worksnap.js"), "--version"] });
    for (const [name, source] of [["anchor: SDK-only MCP server (compiled)", SDK_SERVER], ["floor: Bun answering by hand (compiled)", FLOOR]] as const) {
      const src = join(ROOT, "bench", `.startup-${name.includes("SDK") ? "sdk" : "floor"}.ts`);
      writeFileSync(src, source);
      const outfile = join(work, name.includes("SDK") ? "sdk-server" : "floor");
      try {
        const r = await Bun.build({
          entrypoints: [src],
          compile: { outfile, autoloadDotenv: false, autoloadBunfig: false },
          minify: { syntax: true, whitespace: true },
          // ES modules: both anchors await at their top level, which a CommonJS bundle cannot
          ...(STARTUP_OPTIONS.bytecode ? { bytecode: true, format: "esm" as const } : {}),
        });
        if (!r.success) throw new AggregateError(r.logs, `building ${name} failed`);
      } finally {
        rmSync(src, { force: true });
      }
      contenders.push({ name, cmd: [outfile], size: statSync(outfile).size });
    }
    console.log(`${machineLine()}\n${runs} runs per row, rounds interleaved, 3 warm-up rounds; native module ${native.ok ? "embedded" : "absent"}; bytecode ${STARTUP_OPTIONS.bytecode ? "on" : "off"} in the current build`);
    const init = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
    const version = new Map<string, number[]>(contenders.map((c) => [c.name, []]));
    for (let round = 0; round < runs + 3; round++) {
      for (const c of contenders) {
        const ms = await timeToInitialize(c.cmd, work, c.env);
        const v = c.version ? await timeToExit(c.version, work, c.env) : NaN;
        if (round < 3) continue;
        init.get(c.name)!.push(ms);
        if (c.version) version.get(c.name)!.push(v);
      }
    }
    const floor = median(init.get(contenders.at(-1)!.name)!);
    const rows = contenders.map((c) => {
      const m = median(init.get(c.name)!);
      const xs = [...init.get(c.name)!].sort((a, b) => a - b);
      return [c.name, fmtMs(m), fmtMs(xs[0]!), fmtMs(xs[Math.floor(xs.length * 0.9)]!), fmtRatio(m / floor), c.version ? fmtMs(median(version.get(c.name)!)) : "—", c.size ? fmtBytes(c.size) : "—"];
    });
    console.log(table(["contender", "to initialize reply (median)", "min", "p90", "vs floor", "--version (median)", "size"], rows));
    console.log(`${loadLine()} at the end`);
    return 0;
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

await runMain(main);
