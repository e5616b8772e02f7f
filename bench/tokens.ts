// Benchmark: what a model pays in tokens for worksnap's answers, against the official reference server
// (@modelcontextprotocol/server-filesystem, a devDependency, run with node) on the same scripted agent tasks in the
// same repository. Both servers are spoken to through the MCP SDK's own client over stdio. Tokens are counted with
// an o200k tokenizer (gpt-tokenizer): for each task, the calls the model writes (tool name and arguments as JSON)
// plus the answer text it reads (content[0].text); for each server, the visible tool list (name, description and
// input schema of every tool). The tasks are in bench/token-tasks.ts. A third column runs worksnap's scripts against
// `serve --text json` (the text is the JSON of structuredContent), to show what the compact text saves.
//
//   npm run build && node_modules/.bin/bun bench/tokens.ts [--repo DIR] [--rev REV] [--runs N] [--write] [--show]
//
// The repository is a fresh `git clone` of --repo (default: this repository) at --rev (default HEAD), one clone per
// server, reset to the commit before every task. Ids in worksnap's answers are random (leases, conversations), so
// each task runs --runs times (default 3) and the median is reported. --show prints every call and answer of the
// first run. --write replaces bench/tokens-README-figures.md with the figures.

import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StdioClientTransport } from "@modelcontextprotocol/sdk/client/stdio.js";
import { argValue, fmtRatio, loadLine, machineLine, markdownTable, median, runMain, table } from "./lib.ts";
import { requestTokens, tokens, visibleToolTokens, type VisibleTool } from "./token-count.ts";
import { type Agent, type Answer, TASKS, exploreWithDirectoryTree, taskEnv } from "./token-tasks.ts";

const args = process.argv.slice(2);
const ROOT = resolve(import.meta.dir, "..");
const source = resolve(argValue(args, "--repo") ?? ROOT);
const rev = argValue(args, "--rev") ?? "HEAD";
const runs = Number(argValue(args, "--runs") ?? 3);
const show = args.includes("--show");
const BINARY = join(ROOT, "dist", "worksnap");
const REFERENCE = join(ROOT, "node_modules", "@modelcontextprotocol", "server-filesystem", "dist", "index.js");
const TARGETS = { "search/read/edit": 0.2, bookkeeping: 0.8 } as const;
const TOOL_LIST_TARGET = 3000;
/** The twelve snapshot and workspace tools the tool-list target is for. */
const SUBSTRATE = /^(snapshot|workspace)_/;

interface Server {
  name: string;
  root: string;
  client: Client;
  tools: VisibleTool[];
}

function git(cwd: string, ...argv: string[]): string {
  const r = Bun.spawnSync(["git", ...argv], { cwd, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${argv.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

async function connect(name: string, command: string, argv: string[], root: string): Promise<Server> {
  const transport = new StdioClientTransport({ command, args: argv, cwd: root, stderr: "pipe" });
  const client = new Client({ name: "worksnap-token-bench", version: "0" });
  await client.connect(transport);
  const { tools } = await client.listTools();
  return { name, root, client, tools };
}

/** An agent that counts: every call's request tokens and answer tokens, with the calls kept for --show. */
function countingAgent(server: Server, log: string[] | null): Agent & { total: () => number; calls: () => number } {
  let total = 0;
  let calls = 0;
  return {
    total: () => total,
    calls: () => calls,
    async call(name, callArgs) {
      const r: any = await server.client.callTool({ name, arguments: callArgs });
      const text = (r.content ?? []).filter((c: { type: string }) => c.type === "text").map((c: { text: string }) => c.text).join("\n");
      const req = requestTokens(name, callArgs);
      const ans = tokens(text);
      total += req + ans;
      calls++;
      log?.push(`>>> ${name} ${JSON.stringify(callArgs)}  [${req} + ${ans} tokens]\n${text}\n`);
      return { text, structured: r.structuredContent, isError: r.isError === true } satisfies Answer;
    },
  };
}

function reset(root: string, commit: string): void {
  git(root, "reset", "-q", "--hard", commit);
  git(root, "clean", "-qfd", "-e", ".mcp");
}

async function main(): Promise<number> {
  const before = machineLine();
  const scratch = mkdtempSync(join(tmpdir(), "wsbench-tokens-"));
  const servers: Server[] = [];
  try {
    const commit = git(source, "rev-parse", "--verify", `${rev}^{commit}`).trim();
    const clone = (dir: string) => {
      git(scratch, "clone", "-q", "--no-checkout", source, dir);
      reset(join(scratch, dir), commit);
      return join(scratch, dir);
    };
    const ours = await connect("worksnap", BINARY, ["serve", "--root", clone("worksnap")], join(scratch, "worksnap"));
    const json = await connect("worksnap --text json", BINARY, ["serve", "--root", clone("json"), "--text", "json"], join(scratch, "json"));
    const reference = await connect("reference", "node", [REFERENCE, join(scratch, "reference")], clone("reference"));
    servers.push(ours, json, reference);
    const listGlob = Boolean((ours.tools.find((t) => t.name === "snapshot_list")?.inputSchema as any)?.properties?.glob);

    const listTokens = (tools: VisibleTool[]) => tools.reduce((n, t) => n + visibleToolTokens(t), 0);
    const substrate = ours.tools.filter((t) => SUBSTRATE.test(t.name));
    const rows: string[][] = [];
    const verdicts: boolean[] = [];
    const oursList = listTokens(substrate);
    const refList = listTokens(reference.tools);
    verdicts.push(oursList <= TOOL_LIST_TARGET);
    rows.push([
      `tool list (${substrate.length} substrate tools vs ${reference.tools.length})`,
      String(oursList),
      String(listTokens(json.tools.filter((t) => SUBSTRATE.test(t.name)))),
      String(refList),
      fmtRatio(oursList / refList),
      `≤ ${TOOL_LIST_TARGET} tokens`,
      oursList <= TOOL_LIST_TARGET ? "met" : "missed",
    ]);
    if (ours.tools.length > substrate.length) {
      const all = listTokens(ours.tools);
      rows.push([`tool list, all ${ours.tools.length} tools served`, String(all), String(listTokens(json.tools)), String(refList), fmtRatio(all / refList), "—", "—"]);
    }

    const shown: string[] = [];
    for (const task of TASKS) {
      const per: Record<string, number[]> = Object.fromEntries(servers.map((s) => [s.name, []]));
      const calls: Record<string, number> = {};
      for (let run = 0; run < runs; run++) {
        for (const s of servers) {
          reset(s.root, commit);
          const env = taskEnv(s.root, listGlob);
          task.setup?.(env);
          const log = show && run === 0 ? [`## ${task.name}: ${s.name}`] : null;
          const agent = countingAgent(s, log);
          await (s === reference ? task.reference : task.worksnap)(agent, env);
          task.check?.(env);
          per[s.name]!.push(agent.total());
          calls[s.name] = agent.calls();
          if (log) shown.push(...log);
        }
      }
      const w = median(per.worksnap!);
      const j = median(per[json.name]!);
      const r = median(per.reference!);
      const target = TARGETS[task.kind];
      const met = w / r <= target;
      verdicts.push(met);
      const note = task.name === "finding files by name" && !listGlob ? " (no glob yet: a recursive listing)" : "";
      rows.push([`${task.name}${note} (${calls.worksnap} vs ${calls.reference} calls)`, String(w), String(j), String(r), fmtRatio(w / r), `≤ ${target}x`, met ? "met" : "missed"]);
    }

    // The reference's other way to explore a tree, to show its script above is its cheaper one.
    reset(reference.root, commit);
    const tree = countingAgent(reference, null);
    await exploreWithDirectoryTree(tree);

    const headers = ["task", "worksnap", "worksnap --text json", "reference", "ratio", "target", "verdict"];
    console.log(`machine: ${before}`);
    console.log(`repository: ${source} at ${commit.slice(0, 12)}; median of ${runs} runs per task\n`);
    console.log(table(headers, rows));
    console.log(`\nreference exploring with directory_tree instead: ${tree.total()} tokens`);
    if (show) console.log(`\n${shown.join("\n")}`);
    if (args.includes("--write")) {
      const md = [
        "# token benchmark figures",
        "",
        `Measured by \`node_modules/.bin/bun bench/tokens.ts --runs ${runs} --write\` on ${before}; after the run: ${loadLine()}.`,
        `Repository: a clone of this repository at ${commit.slice(0, 12)}. Tokens: o200k (gpt-tokenizer), median of ${runs} runs.`,
        "",
        markdownTable(headers, rows),
        "",
        `The reference exploring the same tree with one directory_tree call instead: ${tree.total()} tokens.`,
        "",
      ].join("\n");
      writeFileSync(join(import.meta.dir, "tokens-README-figures.md"), md);
      console.log("\nwrote bench/tokens-README-figures.md");
    }
    return verdicts.every(Boolean) ? 0 : 1;
  } finally {
    for (const s of servers) await s.client.close().catch(() => undefined);
    rmSync(scratch, { recursive: true, force: true });
  }
}

await runMain(main);
