import { compareUtf8 } from "../../core/byte-order";
import type { ListEntry, ListResult } from "../../ops/snapshot/list";
import { count, leaseTag, line, lines, pathText, quotedText, unreadableLine } from "./text";

/** The list arguments a rendering depends on (others, such as a glob, only change which entries come back). */
export interface ListView {
  recursive?: boolean;
  glob?: string;
}

/**
 * snapshot_list as names, the way `ls -F` shows them: `dir/`, `link@`,
 * `tool*` (executable). Direct children come one per line, relative to the
 * listed directory. A recursive or glob listing puts each directory on one
 * line, `dir/: name name …` (the directory's full path, its files'
 * names separated by spaces; a name holding a space or a quote is quoted),
 * so a deep tree repeats no directory name.
 */
export function renderList(out: ListResult & { cursor?: string }, args: ListView): string {
  const base = out.path === "." ? "" : `${out.path}/`;
  const grouped = args.recursive === true || typeof args.glob === "string";
  const shown = grouped ? out.entries.filter((e) => e.type !== "dir") : out.entries;
  const groups = grouped ? groupByDir(shown) : [];
  const single = out.entries.length === 1 && out.entries[0]!.path === out.path;
  const head = line(
    single ? pathText(out.path) : grouped ? `${pathText(out.path)}${args.recursive ? " (recursive)" : ""}` : `${out.path === "." ? "." : pathText(out.path)}/`,
    typeof args.glob === "string" && `glob ${args.glob}`,
    shown.length === 0
      ? "empty"
      : grouped
        ? `${count(shown.length, "file")} in ${count(groups.length, "directory", "directories")}`
        : out.truncated && count(shown.length, "entry", "entries"),
    leaseTag(out),
  );
  const body = single ? [nameText(out.entries[0]!, pathText(out.path))] : grouped ? groups : shown.map((e) => nameText(e, e.path.startsWith(base) ? e.path.slice(base.length) : e.path));
  return lines(head, ...body, tail(out), unreadableLine(out));
}

/** A name as `ls -F` marks it; quoted when a space, a quote or a control character would make it ambiguous. */
function nameText(e: ListEntry, name: string): string {
  const n = /[\s"\\\x00-\x1f\x7f-\x9f]/.test(name) ? quotedText(name) : name;
  if (e.type === "dir") return `${n}/`;
  if (e.type === "symlink") return `${n}@`;
  return e.mode === "100755" ? `${n}*` : n;
}

/** One line per directory (full path, byte order): `dir/: a.ts b.ts`. */
function groupByDir(entries: ListEntry[]): string[] {
  const groups = new Map<string, string[]>();
  for (const e of entries) {
    const slash = e.path.lastIndexOf("/");
    const dir = slash < 0 ? "" : e.path.slice(0, slash);
    const names = groups.get(dir) ?? [];
    names.push(nameText(e, e.path.slice(slash + 1)));
    groups.set(dir, names);
  }
  return [...groups.keys()].sort(compareUtf8).map((dir) => `${dir === "" ? "." : pathText(dir)}/: ${groups.get(dir)!.join(" ")}`);
}

/** A cut listing says how much is missing and how to get it: the cursor when there is one, else limit or path. */
function tail(out: ListResult & { cursor?: string }): string | null {
  if (!out.truncated) return null;
  const missing = out.total - out.entries.length;
  return line(missing > 0 ? `… ${count(missing, "more entry", "more entries")}` : "… more", out.cursor ? `cursor ${out.cursor}` : "raise limit or narrow path");
}
