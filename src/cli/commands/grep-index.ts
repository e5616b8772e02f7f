import { DEFAULT_DISK_BUDGET, DEFAULT_MEMORY_BUDGET, TrigramIndexer } from "../../repo/trigram-index/indexer";
import { closeWorkspace, openWorkspace } from "../../ops/workspace";
import { UsageError, parseArgv, sizeFlag } from "../args";
import { printJson, stdout } from "../output";

export const INDEX_HELP = `worksnap index <command> [--root DIR] [--json]

The grep index: the byte trigrams of every blob of git's index, under
.mcp/index/, keyed by the blob's SHA-256 (never stale, shared by every snapshot
holding the blob). snapshot_grep asks it which files cannot match and reads
only the others. A server (worksnap serve) builds it in the background.
  build [--budget SIZE] [--memory SIZE]
                  index the blobs of git's index not indexed yet, now
                  (disk at most SIZE, default 1G; memory, default 96M)
  status          segments, blobs and bytes indexed; how many of git's index
                  blobs the index holds
  clear           remove the index (it is a cache: grep reads files instead)
Exit codes: 0 ok, 1 user error, 2 usage, 70 internal.
`;

export async function cmdIndex(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  const { flags, positionals } = parseArgv(rest, { root: { kind: "string" }, json: { kind: "bool" }, budget: { kind: "string" }, memory: { kind: "string" } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  if (sub !== "build" && (flags.budget !== undefined || flags.memory !== undefined)) throw new UsageError("--budget and --memory are options of build");
  const ws = openWorkspace((flags.root as string | undefined) ?? process.cwd());
  try {
    const diskBudget = sizeFlag(flags.budget, "budget") ?? DEFAULT_DISK_BUDGET;
    const memoryBudget = sizeFlag(flags.memory, "memory") ?? DEFAULT_MEMORY_BUDGET;
    if (memoryBudget < 1024 * 1024) throw new UsageError("--memory must be at least 1M");
    const indexer = new TrigramIndexer(ws.repo, ws.trigrams, { diskBudget, memoryBudget, background: false, known: (oid) => ws.blobs.knownSha256(oid) });
    if (sub === "build") {
      const pass = await indexer.update({ forCoverage: true });
      const result = { ...pass, ms: Math.round(pass.ms), ...(await indexer.coverage()) };
      if (flags.json) printJson(result);
      else stdout(`indexed ${result.indexed} blobs (${mb(result.bytes)}) in ${result.segments} segments, ${(result.ms / 1000).toFixed(2)} s; ${coverageLine(result)}${result.full ? "; the disk budget is spent" : ""}\n`);
    } else if (sub === "status") {
      const result = await indexer.coverage();
      if (flags.json) printJson(result);
      else stdout(`${coverageLine(result)}\n`);
    } else if (sub === "clear") {
      const removed = indexer.clear();
      if (flags.json) printJson({ removed });
      else stdout(`removed ${removed} segments\n`);
    } else throw new UsageError(sub ? `unknown index command ${sub}` : "index needs a command: build, status or clear");
  } finally {
    closeWorkspace(ws);
  }
  return 0;
}

function mb(bytes: number): string {
  return `${(bytes / 1e6).toFixed(1)} MB`;
}

function coverageLine(c: { segments_total: number; blobs_indexed: number; disk_bytes: number; index_blobs: number; index_blobs_covered: number }): string {
  return `${c.index_blobs_covered} of git's ${c.index_blobs} index blobs indexed; ${c.blobs_indexed} blobs in ${c.segments_total} segments, ${mb(c.disk_bytes)} on disk`;
}
