/**
 * Snapshot grep reads a file from the work tree only when it still holds the
 * snapshot's blob, and searches a blob several paths hold once: the answer is
 * always the snapshot's lines under each path.
 */
import { describe, expect, test } from "bun:test";
import { execFileSync } from "node:child_process";
import { mkdirSync, readFileSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { createSnapshot } from "../../../src/ops/snapshot/create";
import { snapshotGrep } from "../../../src/ops/snapshot/grep";
import { tmpRepo, type TmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

/** Three paths: two hold one blob (as release trees side by side do), one its own. */
function seed(repo: TmpRepo): void {
  repo.write("v1/lib.ts", "export const shared = 'needle';\n");
  repo.write("v2/lib.ts", "export const shared = 'needle';\n");
  repo.write("v2/own.ts", "const own = 'needle too';\n");
  repo.commit();
}

async function snapshotOf(repo: TmpRepo) {
  using ws = wsOf(repo);
  const { snapshot_id } = await createSnapshot(ws, { paths: ["."] });
  return { id: snapshot_id, entries: ws.snapshots.load(snapshot_id).entries };
}

describe("snapshot grep reads (work tree files that still hold the blob, blobs several paths hold)", () => {
  test("a blob two paths hold: both paths answered with their own name, from the work tree or, once both files are gone, from the store", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const snap = await snapshotOf(repo);
    const ask = async () => {
      using ws = wsOf(repo);
      const r = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.id, pattern: "needle", fixed_strings: true });
      return { matches: r.matches.map((m) => `${m.path}:${m.line}:${m.col}: ${m.text}`), searched: r.files_searched };
    };
    const expected = {
      matches: ["v1/lib.ts:1:24: export const shared = 'needle';", "v2/lib.ts:1:24: export const shared = 'needle';", "v2/own.ts:1:14: const own = 'needle too';"],
      searched: 3,
    };
    expect(await ask()).toEqual(expected);
    rmSync(join(repo.root, "v1"), { recursive: true });
    rmSync(join(repo.root, "v2"), { recursive: true });
    expect(await ask()).toEqual(expected);
  });

  test("snapshot grep after the work tree changed answers the snapshot's lines (edits, a FIFO and a symlink in its place)", async () => {
    await using repo = await tmpRepo();
    seed(repo);
    const snap = await snapshotOf(repo);
    writeFileSync(join(repo.root, "v2/own.ts"), "const own = 'other text';\n");
    unlinkSync(join(repo.root, "v1/lib.ts"));
    execFileSync("mkfifo", [join(repo.root, "v1/lib.ts")]);
    unlinkSync(join(repo.root, "v2/lib.ts"));
    symlinkSync("own.ts", join(repo.root, "v2/lib.ts"));
    using ws = wsOf(repo);
    const r = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.id, pattern: "needle", fixed_strings: true });
    expect(r.matches.map((m) => `${m.path}:${m.line}:${m.col}`)).toEqual(["v1/lib.ts:1:24", "v2/lib.ts:1:24", "v2/own.ts:1:14"]);
  });

  test("a racer rewriting the work tree while snapshot greps run (truncated, moved lines, a look-alike, swapped for a symlink) never changes an answer", async () => {
    await using repo = await tmpRepo();
    const names: string[] = [];
    for (let i = 0; i < 24; i++) {
      const dir = `r${i % 3}`; // three trees side by side: each blob held by three paths
      const name = `${dir}/m${Math.floor(i / 3)}.ts`;
      names.push(name);
      repo.write(name, `${"filler line\n".repeat(Math.floor(i / 3) * 40)}export const needle${Math.floor(i / 3)} = 1; // Needle\n`);
    }
    repo.commit();
    const snap = await snapshotOf(repo);
    const queries = [
      { pattern: "needle", fixed_strings: true },
      { pattern: "NEEDLE", fixed_strings: true, case_insensitive: true },
      { pattern: "needle[0-9]+ = \\d" },
    ];
    const answer = async (q: Record<string, unknown>) => {
      using ws = wsOf(repo);
      const r = await snapshotGrep(ws, { mode: "snapshot", snapshot_id: snap.id, ...q } as never);
      return { matches: r.matches.map((m) => `${m.path}:${m.line}:${m.col}: ${m.text}`), files: r.files_searched };
    };
    const expected = [];
    for (const q of queries) expected.push(await answer(q));
    expect(expected[0]!.matches).toHaveLength(24);

    // the racer: each round truncates each file, writes it with the match on another line, writes a look-alike of
    // the same size with one byte changed, swaps it for a symlink to a file with a match, and puts it back
    mkdirSync(join(repo.root, ".git/race"));
    names.forEach((f, i) => {
      const bytes = readFileSync(join(repo.root, f), "utf8");
      writeFileSync(join(repo.root, `.git/race/orig${i}`), bytes);
      writeFileSync(join(repo.root, `.git/race/alike${i}`), bytes.replace("needle", "neeDle"));
    });
    writeFileSync(join(repo.root, ".git/race/decoy"), "const decoy = 'needle in the work tree only';\n");
    const script = [
      "n=0",
      "while :; do",
      ...names.map(
        (f, i) =>
          `  : > ${f}; printf 'needle moved\\nexport const needleX = 2;\\n' > ${f}; cp .git/race/alike${i} ${f}; rm -f ${f}; ln -s "$PWD/.git/race/decoy" ${f}; rm -f ${f}; cp .git/race/orig${i} ${f}`,
      ),
      "  n=$((n+1)); echo $n > .git/race/rounds",
      "done",
    ].join("\n");
    const rounds = () => {
      try {
        return Number(readFileSync(join(repo.root, ".git/race/rounds"), "utf8"));
      } catch {
        return 0;
      }
    };
    const racer = Bun.spawn(["sh", "-c", script], { cwd: repo.root, stdout: "ignore", stderr: "ignore" });
    let asked = 0;
    try {
      // at least 10 rounds of the three queries, and until the racer went through every file at least 5 times
      for (const deadline = Date.now() + 60_000; (asked < 30 || rounds() < 5) && Date.now() < deadline; asked += queries.length) {
        for (let k = 0; k < queries.length; k++) expect(await answer(queries[k]!)).toEqual(expected[k]!);
      }
    } finally {
      racer.kill();
      await racer.exited;
    }
    expect(rounds()).toBeGreaterThanOrEqual(5);
    expect(asked).toBeGreaterThanOrEqual(30);
  }, 120_000);
});

