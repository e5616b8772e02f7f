import { describe, expect, test } from "bun:test";
import { appendFileSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { withWorktreeLock } from "../../../src/ops/write/worktree-lock";
import { mcpSession } from "../../helpers/binary";
import { tmpDir, tmpRepo } from "../../helpers/tmp-repo";
import { wsOf } from "../../helpers/workspace";

const BUN = join(import.meta.dir, "..", "..", "..", "node_modules", ".bin", "bun");
const LOCK_WORKER = join(import.meta.dir, "..", "..", "fixtures", "lock-worker.ts");

function startLockWorker(root: string, log: string) {
  const child = Bun.spawn([BUN, LOCK_WORKER, root, log], { stdin: "pipe", stdout: "pipe", stderr: "pipe" });
  const locked = (async () => {
    let out = "";
    for await (const chunk of child.stdout as ReadableStream<Uint8Array>) {
      out += new TextDecoder().decode(chunk);
      if (out.includes("locked\n")) return;
    }
    throw new Error(`lock worker exited early: ${await new Response(child.stderr).text()}`);
  })();
  return { child, locked };
}

describe("work-tree lock", () => {
  test("inside one process, holders never overlap and a nested call re-enters", async () => {
    await using repo = await tmpRepo();
    using ws = wsOf(repo);
    const log: string[] = [];
    const holder = (name: string) =>
      withWorktreeLock(ws, async () => {
        log.push(`${name} in`);
        await Bun.sleep(5);
        await withWorktreeLock(ws, async () => log.push(`${name} nested`));
        log.push(`${name} out`);
      });
    await Promise.all([holder("a"), holder("b"), holder("c")]);
    expect(log).toEqual(["a in", "a nested", "a out", "b in", "b nested", "b out", "c in", "c nested", "c out"]);
  });

  test("across processes: a second process waits for a live holder, even one holding it longer than the recovery delay", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir();
    const log = join(dir.path, "order.log");
    using ws = wsOf(repo);
    const w = startLockWorker(repo.root, log);
    await w.locked;
    const mine = withWorktreeLock(ws, async () => appendFileSync(log, "main in\n"));
    await Bun.sleep(4_500); // longer than the 3 s after which a dead holder's lock is taken over
    (w.child.stdin as import("bun").FileSink).write("go\n");
    await (w.child.stdin as import("bun").FileSink).flush();
    await mine;
    expect(await w.child.exited).toBe(0);
    expect(readFileSync(log, "utf8")).toBe("worker in\nworker out\nmain in\n");
  }, 30_000);

  test("a holder killed with -9 does not wedge the repository: the next writer takes the lock over", async () => {
    await using repo = await tmpRepo();
    await using dir = tmpDir();
    const log = join(dir.path, "order.log");
    using ws = wsOf(repo);
    const w = startLockWorker(repo.root, log);
    await w.locked;
    w.child.kill(9);
    await w.child.exited;
    await withWorktreeLock(ws, async () => appendFileSync(log, "main in\n"));
    expect(readFileSync(log, "utf8")).toBe("worker in\nmain in\n");
  }, 60_000);
});

const lines = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag} line ${i + 1}\n`).join("");

describe("two server processes on one repository", () => {
  test("patching different files at the same time: every patch of both succeeds", async () => {
    await using repo = await tmpRepo();
    repo.write("a.txt", lines("a", 40));
    repo.write("b.txt", lines("b", 40));
    repo.commit();
    await using s1 = await mcpSession(repo.root);
    await using s2 = await mcpSession(repo.root);
    const run = async (s: typeof s1, file: string, tag: string) => {
      for (let i = 1; i <= 12; i++) {
        const patch = `--- a/${file}\n+++ b/${file}\n@@ -${i * 3},1 +${i * 3},1 @@\n-${tag} line ${i * 3}\n+${tag} LINE ${i * 3} by ${file}\n`;
        const r = await s.call("workspace_apply_patch", { mode: "worktree", patch });
        expect(r.applied).toBe(true);
      }
    };
    await Promise.all([run(s1, "a.txt", "a"), run(s2, "b.txt", "b")]);
    for (const [file, tag] of [["a.txt", "a"], ["b.txt", "b"]] as const) {
      let want = lines(tag, 40);
      for (let i = 1; i <= 12; i++) want = want.replace(`${tag} line ${i * 3}\n`, `${tag} LINE ${i * 3} by ${file}\n`);
      expect(readFileSync(join(repo.root, file), "utf8")).toBe(want);
    }
  }, 120_000);

  test("patching the same lines at the same time: one wins, the other gets STALE_LEASE or a reject, never a merge", async () => {
    await using repo = await tmpRepo();
    repo.write("f.txt", lines("f", 20));
    repo.commit();
    await using s1 = await mcpSession(repo.root);
    await using s2 = await mcpSession(repo.root);
    for (let round = 0; round < 6; round++) {
      repo.git("checkout", "-q", "--", "f.txt");
      const useLease = round % 2 === 0;
      const [r1, r2] = await Promise.all([s1, s2].map((s) => s.call("snapshot_file", { mode: "worktree", path: "f.txt" })));
      const patchFor = (who: string) => `--- a/f.txt\n+++ b/f.txt\n@@ -9,3 +9,3 @@\n f line 9\n-f line 10\n+line 10 by ${who}\n f line 11\n`;
      const attempt = async (s: typeof s1, lease: string, who: string) => {
        const r: any = await s.raw("workspace_apply_patch", { mode: "worktree", patch: patchFor(who), ...(useLease ? { lease_id: lease } : {}) });
        if (r.isError) return { who, outcome: r.structuredContent.error.code as string };
        return { who, outcome: r.structuredContent.applied ? "applied" : r.structuredContent.rejects[0].hunks[0].reason };
      };
      const outcomes = await Promise.all([attempt(s1, r1.lease_id, "one"), attempt(s2, r2.lease_id, "two")]);
      const winners = outcomes.filter((o) => o.outcome === "applied");
      expect(winners.length).toBe(1);
      const loser = outcomes.find((o) => o.outcome !== "applied")!;
      expect(loser.outcome).toBe(useLease ? "STALE_LEASE" : "context_mismatch");
      expect(readFileSync(join(repo.root, "f.txt"), "utf8")).toBe(lines("f", 20).replace("f line 10\n", `line 10 by ${winners[0]!.who}\n`));
    }
  }, 120_000);
});
