/**
 * The CLI's text output shows a path that holds a control character, a double quote or a backslash quoted as
 * git quotes it (src/cli/shown-path.ts), so a name an agent chose can never break a line apart, pass for
 * another line, or reach a reviewer's terminal as an escape sequence. Checked against git's own quoting of the
 * same names (`core.quotePath=false`: UTF-8 shown as it is), and through the compiled CLI: `history status`,
 * `history reject`, `snapshot changes`, `snapshot list` and `apply`, with names written by an agent through the
 * server.
 */
import { describe, expect, test } from "bun:test";
import fc from "fast-check";
import { shownPath } from "../../src/cli/shown-path";
import { unquoteCStyle } from "../../src/ops/patch/git-quote";
import { cli, mcpSession } from "../helpers/binary";
import { tmpRepo } from "../helpers/tmp-repo";

/** Names an agent may give: a line break, a carriage return that would overwrite the line, an erase sequence, quotes. */
const HOSTILE = ["new\nline.txt", "evil.sh\rM  harmless.txt", "esc\u001b[2Kred.txt", 'say "hi".txt', "back\\slash.txt", "tab\there.txt", "bell\u0007.txt", "del\u007f.txt"];
/** The write tools refuse a backslash (it is no separator): an agent's names are the others. */
const AGENT = HOSTILE.filter((name) => !name.includes("\\"));
const PLAIN = ["plain.txt", "café/naïve.txt", "spaces in name.txt", "日本語.md"];
/** No C0 control but the line feeds that end lines, no DEL, no C1 control. */
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u2028\u2029]/u;

describe("shownPath", () => {
  test("equals git's quoting of the same names (core.quotePath=false); plain and UTF-8 names as they are", async () => {
    await using repo = await tmpRepo();
    for (const name of [...HOSTILE, ...PLAIN]) repo.write(name, "x\n");
    // `ls-files` quotes as `git diff` does (status's porcelain also quotes a name with a space)
    const git = repo.git("-c", "core.quotePath=false", "ls-files", "--others").split("\n").filter(Boolean).sort();
    expect([...HOSTILE, ...PLAIN].map(shownPath).sort()).toEqual(git);
    for (const name of PLAIN) expect(shownPath(name)).toBe(name);
  });

  test("C1 controls and Unicode line separators, which git leaves as they are, are quoted as octal bytes", () => {
    expect(shownPath("csi\u009b2J.txt")).toBe('"csi\\302\\2332J.txt"');
    expect(shownPath("a\u2028b")).toBe('"a\\342\\200\\250b"');
  });

  test("property: a shown name is one line without control characters, and reads back to the name (C-style unquoting)", () => {
    // git's unquoting (ops/patch/git-quote.ts) reads byte strings: the shown text's UTF-8 bytes in, the name's out
    const unquote = (shown: string): string => {
      if (!shown.startsWith('"')) return shown;
      const bytes = unquoteCStyle(Buffer.from(shown, "utf8").toString("latin1"))!.value;
      return Buffer.from(bytes, "latin1").toString("utf8");
    };
    fc.assert(
      fc.property(fc.string({ unit: fc.oneof(fc.constantFrom("\n", "\r", "\u001b", '"', "\\", "\u0085", "\u2029", "\u0000", "a", "/", "é", "😀"), fc.integer({ min: 0, max: 0x2fff }).map((c) => String.fromCodePoint(c))) }), (name) => {
        const shown = shownPath(name);
        expect(CONTROL.test(shown) || shown.includes("\n")).toBe(false);
        expect(unquote(shown)).toBe(name);
      }),
      { numRuns: 2000 },
    );
  });
});

describe("the CLI's text output with names an agent chose", () => {
  test("history status, reject (dry run), snapshot changes and list: one line per name, nothing a terminal acts on", async () => {
    await using repo = await tmpRepo();
    repo.write("seed.txt", "seed\n");
    repo.commit();
    const id = cli(["snapshot", "create", "--root", repo.root]).stdout.trim();
    {
      await using s = await mcpSession(repo.root);
      for (const name of AGENT) await s.call("workspace_write_file", { mode: "worktree", path: name, content: `${name}\n` });
    }
    const quoted = AGENT.map(shownPath);
    const clean = (out: string) => {
      expect(CONTROL.test(out)).toBe(false);
      return out.split("\n").filter(Boolean);
    };
    const status = clean(cli(["history", "status", "--root", repo.root]).stdout);
    expect(status).toHaveLength(1 + AGENT.length + 1); // header, one line per edit, the count
    for (const q of quoted) expect(status.some((l) => l.endsWith(`  ${q}`))).toBe(true);
    const edits = cli(["history", "status", "--json", "--root", repo.root]).json().entries.map((e: { edit_id: string }) => e.edit_id);
    const preview = clean(cli(["history", "reject", ...edits, "--dry-run", "--root", repo.root]).stdout);
    for (const q of quoted) expect(preview).toContain(`would delete ${q}`);
    const changes = clean(cli(["snapshot", "changes", id, "--root", repo.root]).stdout);
    expect(changes.sort()).toEqual(quoted.map((q) => `added        ${q}`).sort());
    const listed = clean(cli(["snapshot", "list", "--root", repo.root]).stdout);
    for (const q of quoted) expect(listed.some((l) => l.endsWith(`  ${q}`))).toBe(true);
  });

  test("apply names each file of git's patch on its own line, as git quotes it", async () => {
    await using repo = await tmpRepo();
    repo.write("seed.txt", "seed\n");
    repo.commit();
    for (const name of AGENT) repo.write(name, `${name}\n`);
    repo.git("add", "-A");
    const patch = repo.git("diff", "--cached");
    repo.git("reset", "-q", "--hard");
    const r = cli(["apply", "--root", repo.root], { stdin: patch });
    expect({ code: r.code, stderr: r.stderr }).toEqual({ code: 0, stderr: "" });
    expect(CONTROL.test(r.stdout)).toBe(false);
    const lines = r.stdout.split("\n").filter(Boolean);
    for (const name of AGENT) expect(lines).toContain(`created ${shownPath(name)}`);
  });
});
