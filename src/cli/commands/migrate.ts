import { openRoot } from "../../repo/root";
import { migrateStateDir, type MigrateResult } from "../../repo/state-migrate";
import { STATE_FORMAT } from "../../repo/state-format";
import { UsageError, parseArgv } from "../args";
import { EXIT, printJson, stdout } from "../output";

export const MIGRATE_HELP = `worksnap migrate [--root DIR] [--check] [--json]

Brings the repository's .mcp/ (snapshots, edit history, caches) to this
worksnap's state format (${STATE_FORMAT}), step by step, and records the number in
.mcp/format. A .mcp/ written by a newer worksnap is refused and left as it is.
Stop worksnap servers on the repository first.
  --check   say what would be done and change nothing; exit 1 when a
            migration is needed
Exit codes: 0 ok, 1 refused or (--check) migration needed, 2 usage, 70 internal.
`;

export async function cmdMigrate(argv: string[]): Promise<number> {
  const { flags, positionals } = parseArgv(argv, { root: { kind: "string" }, check: { kind: "bool" }, json: { kind: "bool" } });
  if (positionals.length > 0) throw new UsageError(`unexpected argument ${positionals[0]}`);
  const check = flags.check === true;
  const repo = openRoot((flags.root as string | undefined) ?? process.cwd());
  const r = migrateStateDir(repo.stateDir, { check });
  if (flags.json) printJson(r);
  else stdout(render(r, check));
  return check && !r.current ? EXIT.user : EXIT.ok;
}

function render(r: MigrateResult, check: boolean): string {
  if (!r.exists) return "no .mcp/ here: nothing to migrate\n";
  const lines = r.steps.map((s) => `${check ? "would " : ""}${s}\n`);
  if (r.steps.length === 0) return `.mcp/ is at state format ${r.to}: nothing to do\n`;
  return `${lines.join("")}${check ? `.mcp/ is at state format ${r.from}` : `.mcp/ is now at state format ${r.to}`}\n`;
}
