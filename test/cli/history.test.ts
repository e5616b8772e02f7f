/** `worksnap history` through the compiled binary, on histories recorded by the real write path. */
import { describe, expect, test } from "bun:test";
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { BINARY, cli, requireBinary } from "../helpers/binary";
import { historyFixture, numbered, text } from "../ops/history/helpers";

const C = "conv_1700000000000_aaaaaaaaaaaa";
const D = "conv_1700000000001_bbbbbbbbbbbb";

/** Runs the binary on a pseudo-terminal (util-linux `script`), feeding `input` as typed text. */
function onTty(args: string[], input: string, env: Record<string, string> = {}): { code: number; out: string } {
  const cmd = [requireBinary(), ...args].map((a) => `'${a.replace(/'/g, "'\\''")}'`).join(" ");
  const r = Bun.spawnSync(["script", "-qec", cmd, "/dev/null"], { stdin: new Blob([input]), env: { ...process.env, TERM: "xterm", ...env }, stdout: "pipe", stderr: "pipe" });
  return { code: r.exitCode ?? -1, out: r.stdout.toString() };
}

describe("worksnap history status / show", () => {
  test("status lists edits oldest first as a table; --json has the spec fields; filters narrow it", async () => {
    await using h = await historyFixture();
    h.repo.write("a.txt", "a\n");
    const e1 = await h.write(C, "a.txt", "a\nb\n");
    const e2 = await h.write(D, "new/b.txt", "new\n");
    await h.move(C, "a.txt", "c.txt");
    const table = cli(["history", "status", "--root", h.repo.root]);
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toMatch(/^EDIT\s+TIME \(UTC\)\s+STATUS\s+OP\s+CONVERSATION\s+PATH$/);
    expect(lines[1]).toContain(e1.slice(0, 8));
    expect(lines[1]).toMatch(/pending\s+edit\s+conv_1700000000000_aaaaaaaaaaaa\s+a\.txt$/);
    expect(lines[2]).toMatch(/pending\s+create\s+conv_1700000000001_bbbbbbbbbbbb\s+new\/b\.txt$/);
    expect(lines[3]).toMatch(/move\s+conv_1700000000000_aaaaaaaaaaaa\s+a\.txt -> c\.txt$/);
    expect(lines[4]).toBe("3 edits: 3 pending, 0 accepted, 0 rejected");
    expect(table.stdout).not.toContain("\x1b[");

    const json = cli(["history", "status", "--root", h.repo.root, "--json"]).json();
    expect(json.total).toBe(3);
    expect(json.interrupted).toEqual([]);
    expect(Object.keys(json.entries[0]).sort()).toEqual(
      ["checkpoint_file", "conversation_id", "diff_file", "edit_id", "file_path", "hash_after", "hash_before", "operation", "source_path", "status", "timestamp", "tool_call_index", "tool_name"].sort(),
    );
    expect(json.entries.map((e: any) => e.edit_id).slice(0, 2)).toEqual([e1, e2]);
    expect(json.entries[0]).toMatchObject({ conversation_id: C, tool_call_index: 0, operation: "edit", file_path: "a.txt", source_path: null, tool_name: "edit_file_diff", status: "pending" });
    expect(json.entries[2]).toMatchObject({ tool_call_index: 1, operation: "move", file_path: "c.txt", source_path: "a.txt", tool_name: "move_file" });

    expect(cli(["history", "status", "--root", h.repo.root, "--json", "--conv", D]).json().entries.map((e: any) => e.edit_id)).toEqual([e2]);
    expect(cli(["history", "status", "--root", h.repo.root, "--json", "--file", "a.txt"]).json().entries).toHaveLength(2);
    expect(cli(["history", "status", "--root", h.repo.root, "--json", "--status", "rejected"]).json().entries).toEqual([]);
    const bad = cli(["history", "status", "--root", h.repo.root, "--status", "maybe"]);
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain("pending, accepted, rejected");
  });

  test("show prints an edit's diff, or every diff of a conversation", async () => {
    await using h = await historyFixture();
    h.repo.write("a.txt", "one\ntwo\n");
    const e1 = await h.write(C, "a.txt", "one\nTWO\n");
    await h.write(C, "b.txt", "bee\n");
    const one = cli(["history", "show", e1.slice(0, 6), "--root", h.repo.root]);
    expect(one.code).toBe(0);
    expect(one.stdout).toContain(`edit ${e1}  pending  edit a.txt`);
    expect(one.stdout).toContain("--- a/a.txt\n+++ b/a.txt\n@@ -1,2 +1,2 @@\n one\n-two\n+TWO\n");
    const conv = cli(["history", "show", C, "--root", h.repo.root, "--json"]).json();
    expect(conv.kind).toBe("conversation");
    expect(conv.edits.map((x: any) => x.entry.file_path)).toEqual(["a.txt", "b.txt"]);
    expect(conv.edits[1].diff).toContain("new file mode 100644");
    const missing = cli(["history", "show", "zzzzzzzz", "--root", h.repo.root]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("NOT_FOUND");
  });

  test("an empty history, usage errors (exit 2), --help", async () => {
    await using h = await historyFixture();
    expect(cli(["history", "status", "--root", h.repo.root]).stdout).toBe("no recorded edits\n");
    expect(cli(["history", "reject", "--root", h.repo.root]).code).toBe(2);
    expect(cli(["history", "reject", "abcd", "--conv", C, "--root", h.repo.root]).code).toBe(2);
    expect(cli(["history", "bogus"]).code).toBe(2);
    expect(cli(["history", "cleanup", "--root", h.repo.root]).code).toBe(2);
    expect(cli(["history", "cleanup", "--resolved", "--older-than", "soon", "--root", h.repo.root]).code).toBe(2);
    expect(cli(["history", "status", "--bogus"]).code).toBe(2);
    const help = cli(["history", "--help"]);
    expect(help.code).toBe(0);
    expect(help.stdout).toContain("reject EDIT_ID... | --conv ID [--cascade] [--force]");
  });
});

describe("worksnap history accept / reject", () => {
  test("reject rebuilds the file; a dependency refuses with exit 1 and names the dependent edit; --cascade rejects it too", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", text(numbered("l", 20)));
    const v1 = numbered("l", 20);
    v1[1] = "one";
    await h.write(C, "f.txt", text(v1));
    const v2 = [...v1];
    v2.splice(5, 0, "two");
    const e2 = await h.write(C, "f.txt", text(v2));
    const v3 = [...v2];
    v3[5] = "two, edited";
    const e3 = await h.write(C, "f.txt", text(v3));

    const refused = cli(["history", "reject", e2, "--root", h.repo.root]);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain(e3);
    expect(refused.stderr).toContain("--cascade");
    expect(h.read("f.txt")).toBe(text(v3));

    const json = cli(["history", "reject", e2, "--root", h.repo.root, "--json"]);
    expect(json.code).toBe(1);
    expect(json.json().error).toMatchObject({ code: "INVALID_ARGUMENT", details: { reason: "dependent_edits", dependent_edit_ids: [e3] } });

    const ok = cli(["history", "reject", e2, "--cascade", "--root", h.repo.root]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`rejected ${e2.slice(0, 8)}`);
    expect(ok.stdout).toContain("--cascade");
    expect(ok.stdout).toMatch(/wrote\s+f\.txt\s+sha256 [0-9a-f]{12}/);
    expect(h.read("f.txt")).toBe(text(v1));
    expect(cli(["history", "status", "--json", "--root", h.repo.root]).json().entries.map((e: any) => e.status)).toEqual(["pending", "rejected", "rejected"]);

    // Named by id, rejected edits are accepted again and re-applied.
    const acc = cli(["history", "accept", e2, e3, "--root", h.repo.root, "--json"]).json();
    expect(acc.changed.map((c: any) => [c.edit_id, c.from, c.to])).toEqual([
      [e2, "rejected", "accepted"],
      [e3, "rejected", "accepted"],
    ]);
    expect(h.read("f.txt")).toBe(text(v3));
  });

  test("accept --conv never revives a rejected edit: pending edits become accepted, rejected ones stay, no file changes", async () => {
    await using h = await historyFixture();
    h.repo.write("a.txt", "a\n");
    h.repo.write("b.txt", "b\n");
    const keep = await h.write(C, "a.txt", "a\nkept\n");
    const drop = await h.write(C, "b.txt", "b\ndropped\n");
    expect(cli(["history", "reject", drop, "--root", h.repo.root]).code).toBe(0);
    expect(h.read("b.txt")).toBe("b\n");

    const r = cli(["history", "accept", "--conv", C, "--root", h.repo.root, "--json"]);
    expect(r.code).toBe(0);
    const acc = r.json();
    expect(acc.changed.map((c: any) => [c.edit_id, c.from, c.to])).toEqual([[keep, "pending", "accepted"]]);
    expect(acc.still_rejected).toEqual([drop]);
    expect(acc.files).toEqual([]);
    expect(h.read("a.txt")).toBe("a\nkept\n");
    expect(h.read("b.txt")).toBe("b\n");
    const statuses = cli(["history", "status", "--json", "--root", h.repo.root]).json().entries.map((e: any) => [e.edit_id, e.status]);
    expect(statuses).toEqual([[keep, "accepted"], [drop, "rejected"]]);

    const human = cli(["history", "accept", "--conv", C, "--root", h.repo.root]);
    expect(human.code).toBe(0);
    expect(human.stdout).toContain(`still rejected (name an edit to accept it): ${drop.slice(0, 8)}`);
    expect(h.read("b.txt")).toBe("b\n");
  });

  test("an outside change: refused non-interactively with the diff; --force discards it", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "a\n");
    const e = await h.write(C, "f.txt", "a\nagent\n");
    writeFileSync(join(h.repo.root, "f.txt"), "a\nagent\nperson\n");
    const r = cli(["history", "reject", e, "--root", h.repo.root]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("f.txt changed outside the edit history");
    expect(r.stderr).toContain("+person");
    expect(r.stderr).toContain("--force");
    expect(h.read("f.txt")).toBe("a\nagent\nperson\n");
    const forced = cli(["history", "reject", e, "--force", "--root", h.repo.root]);
    expect(forced.code).toBe(0);
    expect(forced.stdout).toContain("discarded outside changes to f.txt");
    expect(h.read("f.txt")).toBe("a\n");
  });

  test("--dry-run shows the dependent edits, the outside changes and the files a review would write, and writes nothing", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", text(numbered("l", 20)));
    const v1 = numbered("l", 20);
    v1[4] = "one";
    const e1 = await h.write(C, "f.txt", text(v1));
    const v2 = [...v1];
    v2[4] = "one, edited";
    const e2 = await h.write(D, "f.txt", text(v2));
    writeFileSync(join(h.repo.root, "f.txt"), `${text(v2)}by hand\n`);
    const before = cli(["history", "status", "--json", "--root", h.repo.root]).stdout;

    const dry = cli(["history", "reject", e1, "--dry-run", "--root", h.repo.root]);
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`would reject  ${e1.slice(0, 8)}  edit f.txt`);
    expect(dry.stdout).toContain(`depends   ${e2.slice(0, 8)}  edit f.txt  (rejected too with --cascade)`);
    expect(dry.stdout).toContain("f.txt changed outside the edit history");
    expect(dry.stdout).toContain("+by hand");
    expect(dry.stdout).toContain("would write  f.txt");
    expect(dry.stdout).toContain("as asked it would be refused: later kept edits depend");
    expect(dry.stdout).toContain("dry run: nothing was written");
    const json = cli(["history", "reject", e1, "--dry-run", "--cascade", "--force", "--json", "--root", h.repo.root]).json();
    expect(json.refusal).toBeNull();
    expect(json.dependents.map((d: any) => d.edit_id)).toEqual([e2]);
    expect(h.read("f.txt")).toBe(`${text(v2)}by hand\n`);
    expect(cli(["history", "status", "--json", "--root", h.repo.root]).stdout).toBe(before);
  });

  test("on a terminal the outside change is shown and a question asked; only yes goes on", async () => {
    await using h = await historyFixture();
    h.repo.write("f.txt", "a\n");
    const e = await h.write(C, "f.txt", "a\nagent\n");
    writeFileSync(join(h.repo.root, "f.txt"), "a\nagent\nperson\n");
    const no = onTty(["history", "reject", e, "--root", h.repo.root], "n\n");
    expect(no.code).toBe(1);
    expect(no.out).toContain("Discard the outside changes to f.txt and continue? [y/N]");
    expect(no.out.split("+person").length).toBe(2); // the diff is shown once, before the question
    expect(h.read("f.txt")).toBe("a\nagent\nperson\n");
    const yes = onTty(["history", "reject", e, "--root", h.repo.root], "y\n");
    expect(yes.code).toBe(0);
    expect(h.read("f.txt")).toBe("a\n");
  });

  test("colours on a terminal, none with NO_COLOR or when piped", async () => {
    await using h = await historyFixture();
    await h.write(C, "f.txt", "x\n");
    expect(onTty(["history", "status", "--root", h.repo.root], "").out).toContain("\x1b[33m");
    expect(onTty(["history", "status", "--root", h.repo.root], "", { NO_COLOR: "1" }).out).not.toContain("\x1b[");
    expect(cli(["history", "status", "--root", h.repo.root], { env: { NO_COLOR: "" } }).stdout).not.toContain("\x1b[");
  });

  test("the binary invoked as mcpdiff is `worksnap history`; --root defaults to the current directory", async () => {
    await using h = await historyFixture();
    const e = await h.write(C, "f.txt", "x\n");
    const dir = mkdtempSync(join(tmpdir(), "ws-mcpdiff-"));
    try {
      symlinkSync(BINARY, join(dir, "mcpdiff"));
      const r = Bun.spawnSync([join(dir, "mcpdiff"), "reject", e.slice(0, 8)], { cwd: h.repo.root, env: { ...process.env, NO_COLOR: "1" }, stdout: "pipe", stderr: "pipe" });
      expect(r.stderr.toString()).toBe("");
      expect(r.exitCode).toBe(0);
      expect(r.stdout.toString()).toContain("deleted f.txt");
      expect(existsSync(join(h.repo.root, "f.txt"))).toBe(false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  test("works in a git repository too, and the history never shows in git status", async () => {
    await using h = await historyFixture({ git: true });
    h.repo.write("f.txt", "a\n");
    h.repo.commit();
    const e = await h.write(C, "f.txt", "a\nb\n");
    expect(h.repo.git("status", "--porcelain")).toBe(" M f.txt\n");
    expect(cli(["history", "reject", e, "--root", h.repo.root]).code).toBe(0);
    expect(h.repo.git("status", "--porcelain")).toBe("");
  });
});

describe("worksnap history cleanup", () => {
  test("removes fully reviewed conversations, keeps pending ones and those sharing files with them", async () => {
    await using h = await historyFixture();
    const a = await h.write(C, "a.txt", "a\n");
    await h.write(D, "b.txt", "b\n");
    const e = "conv_3_cccccccc";
    const shared = await h.write(e, "c.txt", "c\n");
    await h.write(D, "c.txt", "c\nd\n");
    expect(cli(["history", "accept", a, "--root", h.repo.root]).code).toBe(0);
    expect(cli(["history", "accept", shared, "--root", h.repo.root]).code).toBe(0);
    const r = cli(["history", "cleanup", "--resolved", "--root", h.repo.root, "--json"]).json();
    expect(r.removed).toEqual([{ conversation_id: C, edits: 1 }]);
    expect(r.kept).toEqual([
      { conversation_id: D, reason: "2 pending edits" },
      { conversation_id: e, reason: `shares files with ${D}: 2 pending edits` },
    ]);
    expect(existsSync(join(h.repo.root, ".mcp/edit_history/logs", `${C}.log`))).toBe(false);
    expect(existsSync(join(h.repo.root, ".mcp/edit_history/diffs", C))).toBe(false);
    expect(h.tree()).toEqual({ "a.txt": "a\n", "b.txt": "b\n", "c.txt": "c\nd\n" });
    const young = cli(["history", "cleanup", "--resolved", "--older-than", "1d", "--root", h.repo.root, "--json"]).json();
    expect(young.removed).toEqual([]);
    expect(readFileSync(join(h.repo.root, ".mcp/edit_history/logs", `${D}.log`), "utf8")).toContain("c.txt");
  });
});
