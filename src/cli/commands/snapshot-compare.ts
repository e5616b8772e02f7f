import { resolve } from "node:path";
import type { GrepMatch } from "../../ops/grep";
import { snapshotChanges } from "../../ops/snapshot/changes";
import { snapshotDiff } from "../../ops/snapshot/diff";
import { exportSnapshot } from "../../ops/snapshot/export";
import { keepFreedNativeMemory } from "../../repo/native";
import { snapshotGrep, type GrepArgs } from "../../ops/snapshot/grep";
import { importBundle } from "../../ops/snapshot/import";
import type { Workspace } from "../../ops/workspace";
import { UsageError, intFlag, type FlagSpec } from "../args";
import { isStdout, OutputError, printJson, progressBar, stderr, stdout, warnUnreadable } from "../output";
import { WorksnapError } from "../../core/errors";
import { canonicalJson } from "../../core/canonical-json";
import { shownPath } from "../shown-path";

/**
 * `worksnap snapshot grep|changes|diff|export|import`. Human output by default
 * (grep as path:line:col:text, changes as "status path", diff as text, all
 * pages); --json prints the object the MCP tool returns (one page, with its
 * cursor: pass --cursor to continue).
 */
export const COMPARE_HELP = `  grep PATTERN [PATH...] [--snapshot ID] [-F] [-i] [--include GLOB]... [--exclude GLOB]...
       [--max-files N] [--max-matches N] [-C N] [--cursor C]
                                 search file contents (path:line:col:text)
  changes FROM [TO] [PATH...] [--limit N] [--cursor C]
                                 changed files between two sides ("status path")
  diff FROM [TO] [PATH...] [-U N] [--binary] [--cursor C]
                                 unified diff between two sides (git apply-able;
                                 --binary: binary files as git binary patches too)
  export ID [PATH...] [-o FILE]  deterministic tar bundle of a snapshot
  export --worktree [PATH...] [-o FILE]
                                 capture the live tree and bundle it
                                 (-o -: the bundle to stdout, the summary to stderr)
  import FILE                    verify a bundle and store its snapshot here
                                 (FILE may be a pipe; -: stdin)
FROM/TO are snapshot ids, "worktree" or git revisions (HEAD, HEAD~1, a branch,
a tag, a commit); TO defaults to worktree.
`;

type Sub = (ws: Workspace, positionals: string[], flags: Record<string, unknown>) => Promise<void>;

export const COMPARE_SUBCOMMANDS: Record<string, { flags: FlagSpec; run: Sub }> = {
  grep: {
    flags: {
      snapshot: { kind: "string" },
      "fixed-strings": { kind: "bool", short: "F" },
      "ignore-case": { kind: "bool", short: "i" },
      include: { kind: "multi" },
      exclude: { kind: "multi" },
      "max-files": { kind: "string" },
      "max-matches": { kind: "string" },
      context: { kind: "string", short: "C" },
      cursor: { kind: "string" },
    },
    run: async (ws, pos, flags) => {
      if (pos.length === 0) throw new UsageError("grep needs a PATTERN");
      const [pattern, ...paths] = pos as [string, ...string[]];
      const args: GrepArgs = {
        mode: flags.snapshot ? "snapshot" : "worktree",
        snapshot_id: flags.snapshot as string | undefined,
        pattern,
        fixed_strings: flags["fixed-strings"] === true,
        case_insensitive: flags["ignore-case"] === true,
        paths: paths.length > 0 ? paths : undefined,
        include: flags.include as string[] | undefined,
        exclude: flags.exclude as string[] | undefined,
        max_files: intFlag(flags["max-files"], "max-files"),
        max_matches: intFlag(flags["max-matches"], "max-matches"),
        context_lines: intFlag(flags.context, "context"),
        cursor: flags.cursor as string | undefined,
      };
      if (flags.json) return printJson(await snapshotGrep(ws, args));
      const paged = args.max_files === undefined && args.max_matches === undefined;
      let cursor = args.cursor;
      for (;;) {
        const r = await snapshotGrep(ws, { ...args, cursor, max_matches: args.max_matches ?? 2000 });
        stdout(r.matches.map(renderMatch).join("")); // a page per write
        warnUnreadable(r);
        if (!r.cursor) return;
        if (!paged || r.cursor === cursor) {
          stderr(`worksnap: ${r.note ?? "more matches remain"}\n(continue with --cursor ${r.cursor})\n`);
          return;
        }
        cursor = r.cursor;
      }
    },
  },
  changes: {
    flags: { limit: { kind: "string" }, cursor: { kind: "string" } },
    run: async (ws, pos, flags) => {
      const { from, to, paths } = sides(pos);
      const args = { from, to, paths, limit: intFlag(flags.limit, "limit"), cursor: flags.cursor as string | undefined };
      if (flags.json) return printJson(await snapshotChanges(ws, { ...args, onProgress: undefined }));
      let cursor = args.cursor;
      do {
        const r = await snapshotChanges(ws, { ...args, cursor, onProgress: progressBar("hashing") });
        if (!cursor) warnUnreadable(r); // the same on every page of a comparison
        stdout(r.changes.map((c) => `${c.status.padEnd(12)} ${shownPath(c.path)}${c.old_mode ? `  (${c.old_mode} -> ${c.new_mode})` : ""}\n`).join(""));
        cursor = args.limit === undefined ? r.cursor : undefined;
        if (r.cursor && !cursor) stderr(`(more changes; continue with --cursor ${r.cursor})\n`);
      } while (cursor);
    },
  },
  diff: {
    flags: { context: { kind: "string", short: "U" }, binary: { kind: "bool" }, cursor: { kind: "string" } },
    run: async (ws, pos, flags) => {
      const { from, to, paths } = sides(pos);
      const args = { from, to, paths, context_lines: intFlag(flags.context, "context"), binary: flags.binary === true, cursor: flags.cursor as string | undefined };
      if (flags.json) return printJson(await snapshotDiff(ws, args));
      const r = await snapshotDiff(ws, {
        ...args,
        maxChars: Number.POSITIVE_INFINITY,
        maxFileBytes: Number.POSITIVE_INFINITY,
        onProgress: progressBar("hashing"),
      });
      stdout(r.diff);
      warnUnreadable(r);
      for (const o of r.omitted) stderr(`worksnap: ${shownPath(o.path)} left out of the diff (${o.reason}, ${o.bytes} bytes)\n`);
    },
  },
  export: {
    flags: { output: { kind: "string", short: "o" }, worktree: { kind: "bool" } },
    run: async (ws, pos, flags) => {
      const worktree = flags.worktree === true;
      if (!worktree && pos.length === 0) throw new UsageError("export needs a snapshot ID, or --worktree");
      const id = worktree ? undefined : pos[0];
      const paths = worktree ? pos : pos.slice(1);
      // `-o -`, or a name of this process's stdout (/dev/stdout, which a socket behind it cannot be opened by): fd 1
      const toStdout = flags.output === "-" || (typeof flags.output === "string" && isStdout(flags.output));
      const output = toStdout ? "/dev/stdout" : typeof flags.output === "string" ? resolve(process.cwd(), flags.output) : undefined;
      // this process ends with the export: the memory of each blob read, freed once written, is kept for the next
      keepFreedNativeMemory();
      const r = await exportSnapshot(ws, {
        mode: worktree ? "worktree" : "snapshot",
        snapshot_id: id,
        paths: paths.length > 0 ? paths : undefined,
        output,
        outputFd: toStdout ? 1 : undefined,
        onProgress: flags.json ? undefined : progressBar("exporting"),
      }).catch((err) => {
        // the reader of stdout went away (`| head`): stop quietly, as any output into a closed pipe does
        throw toStdout && err instanceof WorksnapError && err.details.errno === "EPIPE" ? new OutputError("EPIPE") : err;
      });
      // a bundle written into stdout keeps it to itself: the summary goes to stderr
      const say = toStdout ? stderr : stdout;
      if (flags.json) return say(`${canonicalJson(r)}\n`);
      say(`${r.sha256}  ${shownPath(r.path)}\n`);
      warnUnreadable(r);
    },
  },
  import: {
    flags: {},
    run: async (ws, pos, flags) => {
      if (pos.length !== 1) throw new UsageError("import takes exactly one FILE (- for stdin)");
      const stdin = pos[0] === "-";
      const file = stdin ? "/dev/stdin" : resolve(process.cwd(), pos[0] as string);
      const r = await importBundle(ws, { file, fd: stdin ? 0 : undefined, onProgress: flags.json ? undefined : progressBar("verifying") });
      if (flags.json) return printJson(r);
      stdout(`${r.snapshot_id}\n`);
    },
  },
};

function sides(pos: string[]): { from: string; to: string; paths: string[] | undefined } {
  if (pos.length === 0) throw new UsageError("expected FROM [TO] [PATH...]: snapshot ids, worktree or git revisions");
  const [from, to = "worktree", ...paths] = pos as [string, ...string[]];
  return { from, to, paths: paths.length > 0 ? paths : undefined };
}

function renderMatch(m: GrepMatch): string {
  const lines: string[] = [];
  const before = m.before ?? [];
  before.forEach((t, k) => lines.push(`${m.path}-${m.line - before.length + k}-${t}\n`));
  lines.push(`${m.path}:${m.line}:${m.col}:${m.text}\n`);
  (m.after ?? []).forEach((t, k) => lines.push(`${m.path}-${m.line + 1 + k}-${t}\n`));
  return lines.join("");
}
