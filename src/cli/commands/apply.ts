import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { invalidArgument, notFound } from "../../core/errors";
import { applyPatchOp, type ApplyPatchResult } from "../../ops/mutate/apply-patch";
import { closeWorkspace, openWorkspace } from "../../ops/workspace";
import { readRegularWhole } from "../../repo/file-chunks";
import { UsageError, parseArgv } from "../args";
import { handOffInBackground } from "../hand-off";
import { EXIT, printJson, stdout } from "../output";
import { shownPath } from "../shown-path";

export const APPLY_HELP = `worksnap apply [PATCH | -] [--check] [--snapshot ID] [--conv ID] [--root DIR] [--json]

Applies a unified diff (plain or git style, as workspace_apply_patch takes it)
byte for byte, all or nothing, through the same write path as the MCP tool:
staged, made durable, published, and recorded in the edit history (review it
with "worksnap history"). PATCH is a file; without one, or with -, the patch is
read from standard input. Its bytes are applied as they are, as git apply does:
a patch of a file that is not UTF-8 (Latin-1, say) applies byte for byte.
Prints each changed path ("status path"), or every rejected hunk with nothing
written (exit 1).
  --check         only check: print what the patch would change, or its rejects
                  (exit 1), and write nothing, as git apply --check
  --snapshot ID   apply to a stored snapshot instead: prints the new snapshot's id
  --conv ID       record under this edit conversation (default: a new one)
`;

/**
 * The patch's bytes, from a file or standard input. They go to the patch
 * engine as they are, not decoded: a patch of a file in another encoding than
 * UTF-8 (Latin-1 sources, say) carries that file's bytes, and applies as
 * `git apply` applies it.
 */
function readPatch(pos: string[]): Uint8Array {
  if (pos.length > 1) throw new UsageError(`apply takes one PATCH, not ${pos.length}`);
  const source = pos[0] ?? "-";
  const whole = source === "-" ? null : readRegularWhole(resolve(source));
  if (whole) return whole;
  try {
    return readFileSync(source === "-" ? 0 : source);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === "ENOENT") throw notFound(`no patch file ${source}`, { path: source });
    throw invalidArgument(`cannot read the patch ${source === "-" ? "from standard input" : source}: ${code ?? String(err)}`, { path: source });
  }
}

export async function cmdApply(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgv(argv, { root: { kind: "string" }, json: { kind: "bool" }, snapshot: { kind: "string" }, conv: { kind: "string" }, check: { kind: "bool" } });
  const check = flags.check === true;
  if (check && flags.snapshot !== undefined) throw new UsageError("--check checks against the work tree; it takes no --snapshot");
  if (check && flags.conv !== undefined) throw new UsageError("--check records nothing; it takes no --conv");
  const patch = readPatch(positionals);
  const ws = openWorkspace((flags.root as string | undefined) ?? process.cwd(), { handOff: true });
  try {
    const snapshot = flags.snapshot as string | undefined;
    const r = await applyPatchOp(ws, {
      mode: snapshot === undefined ? "worktree" : "snapshot",
      patch,
      ...(snapshot === undefined ? {} : { snapshot_id: snapshot }),
      ...(flags.conv === undefined ? {} : { mcp_conversation_id: flags.conv as string }),
      // the text names the changed paths only: no lease (it would die with this process), no fingerprint, no diff
      brief: flags.json !== true,
      ...(check ? { check: true } : {}),
    });
    if (flags.json) printJson(r);
    else stdout(render(r, check));
    // The files are published, durable and recorded: removing what they replaced, and making spare files for the
    // next write, happen after we exit.
    if (!check) handOffInBackground(ws);
    return r.applied ? EXIT.ok : EXIT.user;
  } finally {
    closeWorkspace(ws);
  }
}

function render(r: ApplyPatchResult, check: boolean): string {
  const out: string[] = [];
  if (!r.applied) {
    for (const f of r.rejects ?? []) for (const h of f.hunks) out.push(`rejected ${f.path === "" ? "patch" : `${shownPath(f.path)} hunk ${h.index}`}: ${h.reason}: ${h.message}`);
    const counts = r.reject_counts;
    if (r.rejects_truncated && counts) out.push(`(${counts.hunks} hunks of ${counts.files} files rejected in all; --json for the details)`);
    out.push("nothing was written");
    return `${out.join("\n")}\n`;
  }
  const would = check ? "would be " : "";
  for (const c of r.changed) out.push(c.from ? `${would}${c.status} ${shownPath(c.from)} -> ${shownPath(c.path)}` : `${would}${c.status} ${shownPath(c.path)}`);
  if (r.truncated) out.push(`(${r.changed_total} paths ${check ? "would change" : "changed"} in all)`);
  for (const w of r.warnings) out.push(`warning: ${w}`);
  if (check) out.push("checked: nothing was written");
  else if (r.cache_hint === "immutable") out.push(`snapshot ${r.snapshot_id}`);
  else if (r.mcp_conversation_id !== undefined) out.push(`recorded under conversation ${r.mcp_conversation_id}`);
  return `${out.join("\n")}\n`;
}
