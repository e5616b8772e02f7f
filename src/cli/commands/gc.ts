import { collectGarbage, type GcResult, type Tally } from "../../ops/gc/gc";
import { closeWorkspace, openWorkspace } from "../../ops/workspace";
import { parseDuration } from "../../ops/history/cleanup";
import { UsageError, parseArgv } from "../args";
import { printJson, stdout } from "../output";

export const GC_HELP = `worksnap gc [--dry-run] [--snapshots-older-than DUR] [--root DIR] [--json]

Prunes .mcp/ of what nothing needs: export bundles (snapshot export writes them
again on demand), loose blobs that no stored snapshot and no edit history entry
names, and git write-tree's scratch objects. Blobs younger than an hour are
kept (a capture in progress may be using them). Snapshots, the edit history and
the private git object store are kept, unless:
  --snapshots-older-than DUR
              also remove the snapshots not captured or handed out again for
              DUR (30d, 12h, 2w), except those a task started from, and the
              blobs only they held; their ids are NOT_FOUND afterwards
  --dry-run   report what would be removed; remove nothing
`;

export async function cmdGc(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgv(argv, { root: { kind: "string" }, json: { kind: "bool" }, "dry-run": { kind: "bool" }, "snapshots-older-than": { kind: "string" } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const older = flags["snapshots-older-than"] as string | undefined;
  const snapshotsOlderThanMs = older === undefined ? undefined : parseDuration(older);
  if (snapshotsOlderThanMs === null) throw new UsageError(`--snapshots-older-than takes a duration such as 30d, 12h or 2w, not ${JSON.stringify(older)}`);
  const ws = openWorkspace((flags.root as string | undefined) ?? process.cwd());
  try {
    const r = await collectGarbage(ws, { dry_run: flags["dry-run"] === true, snapshotsOlderThanMs });
    if (flags.json) printJson(r);
    else stdout(render(r));
  } finally {
    closeWorkspace(ws);
  }
  return 0;
}

function render(r: GcResult): string {
  const { snapshots, exports, blobs, scratch } = r.removed;
  const k = r.kept;
  const total = snapshots.bytes + exports.bytes + blobs.bytes + scratch.bytes;
  const gone = snapshots.files > 0 ? `${snapshots.files / 2} snapshot${snapshots.files === 2 ? "" : "s"} (${size(snapshots.bytes)}), ` : "";
  return [
    `${r.dry_run ? "would remove" : "removed"} ${size(total)}: ${gone}${count(exports, "export bundle")}, ${count(blobs, "unreferenced blob")}, ${count(scratch, "scratch object")}`,
    `kept: ${k.snapshots} snapshot${k.snapshots === 1 ? "" : "s"} with ${count(k.blobs, "loose blob")}; ${count(k.young_blobs, "recent unreferenced blob")}; git object store ${size(k.git_store.bytes)}; edit history ${size(k.history.bytes)}`,
    "",
  ].join("\n");
}

function count(t: Tally, what: string): string {
  return `${t.files} ${what}${t.files === 1 ? "" : "s"} (${size(t.bytes)})`;
}

function size(bytes: number): string {
  if (bytes < 1024) return `${bytes} B`;
  const units = ["KiB", "MiB", "GiB", "TiB"];
  let v = bytes / 1024;
  let u = 0;
  while (v >= 1024 && u < units.length - 1) {
    v /= 1024;
    u++;
  }
  return `${v.toFixed(v < 10 ? 1 : 0)} ${units[u]}`;
}
