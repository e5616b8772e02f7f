import { compareUtf8 } from "../../core/byte-order";
import type { ListEntry, ListResult } from "../../ops/snapshot/list";
import { count, leaseTag, line, lines, pathText } from "./text";

/** The list arguments a rendering depends on (others, such as a glob, only change which entries come back). */
export interface ListView {
  recursive?: boolean;
  glob?: string;
}

/**
 * snapshot_list as names, the way `ls -F` shows them: `dir/`, `link@`,
 * `tool*` (executable). Direct children are names relative to the listed
 * directory; a recursive or glob listing groups files under a `dir/` line
 * per directory (relative to the listed one), so a deep tree does not repeat
 * its directory names on every line.
 */
export function renderList(out: ListResult & { cursor?: string }, args: ListView): string {
  const base = out.path === "." ? "" : `${out.path}/`;
  const grouped = args.recursive === true || typeof args.glob === "string";
  const shown = grouped ? out.entries.filter((e) => e.type !== "dir") : out.entries;
  const head = line(
    `${out.path === "." ? "." : out.path}${grouped ? (args.recursive ? " (recursive)" : "") : "/"}`,
    typeof args.glob === "string" && `glob ${args.glob}`,
    shown.length === 0 ? "empty" : count(shown.length, grouped ? "file" : "entry", grouped ? "files" : "entries"),
    leaseTag(out),
  );
  const single = out.entries.length === 1 && out.entries[0]!.path === out.path;
  const body = single ? [name(out.entries[0]!, "")] : grouped ? groupByDir(shown, base) : shown.map((e) => name(e, base));
  return lines(head, ...body, tail(out));
}

function name(e: ListEntry, base: string): string {
  const rel = pathText(e.path.startsWith(base) ? e.path.slice(base.length) : e.path);
  if (e.type === "dir") return `${rel}/`;
  if (e.type === "symlink") return `${rel}@`;
  return e.mode === "100755" ? `${rel}*` : rel;
}

/** Files of the listed directory first, then one block per directory (byte order): `dir/` and its files' names. */
function groupByDir(entries: ListEntry[], base: string): string[] {
  const groups = new Map<string, string[]>();
  for (const e of entries) {
    const rel = e.path.startsWith(base) ? e.path.slice(base.length) : e.path;
    const slash = rel.lastIndexOf("/");
    const dir = slash < 0 ? "" : rel.slice(0, slash);
    const n = name(e, base);
    const group = groups.get(dir) ?? [];
    group.push(slash < 0 ? n : n.slice(slash + 1));
    groups.set(dir, group);
  }
  const out: string[] = [];
  for (const dir of [...groups.keys()].sort(compareUtf8)) {
    if (dir !== "") out.push(`${pathText(dir)}/`);
    for (const n of groups.get(dir)!) out.push(dir === "" ? n : `  ${n}`);
  }
  return out;
}

/** A cut listing says how much is missing and how to get it: the cursor when there is one, else limit or path. */
function tail(out: ListResult & { cursor?: string }): string | null {
  if (!out.truncated) return null;
  const missing = out.total - out.entries.length;
  return line(missing > 0 ? `… ${missing} more` : "… more", out.cursor ? `cursor ${out.cursor}` : "raise limit or narrow path");
}
