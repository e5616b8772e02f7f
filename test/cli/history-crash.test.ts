/**
 * A review killed half-way (kill -9) leaves a state from which `reject` runs
 * again to completion: the intent written before the first file, idempotent
 * steps, and the locks of the dead process recovered.
 */
import { describe, expect, test } from "bun:test";
import { join } from "node:path";
import type { RepoPath } from "../../src/core/repo-path";
import { cli, requireBinary } from "../helpers/binary";
import { historyFixture, numbered, text, type HistoryFixture } from "../ops/history/helpers";

const C = "conv_1_crash";
const BUN = join(import.meta.dir, "..", "..", "node_modules", ".bin", "bun");
const CRASH_WORKER = join(import.meta.dir, "..", "fixtures", "review-crash-worker.ts");

/** A reject of C killed (SIGKILL) right after the review's durable step `step`. */
function rejectKilledAfter(root: string, step: string) {
  return Bun.spawnSync([BUN, CRASH_WORKER, root, C, step], { stdout: "pipe", stderr: "pipe" });
}
const FILES = 20;

async function bigHistory(h: HistoryFixture): Promise<Record<string, string>> {
  for (let i = 0; i < FILES; i++) h.repo.write(`src/f${i}.txt`, text(numbered(`f${i}`, 300)));
  const original = h.tree();
  for (let i = 0; i < FILES; i++) {
    const v = numbered(`f${i}`, 300);
    v[10] = "edited once";
    await h.write(C, `src/f${i}.txt`, text(v));
    v.splice(100, 0, "inserted");
    await h.write(C, `src/f${i}.txt`, text(v));
  }
  await h.write(C, "created.txt", "new\n");
  await h.move(C, "src/f0.txt", "moved/f0.txt");
  return original;
}

function statuses(root: string): string[] {
  return [...new Set(cli(["history", "status", "--json", "--root", root]).json().entries.map((e: { status: string }) => e.status))] as string[];
}

describe("kill -9 in the middle of a reject", () => {
  for (const step of ["intent-written", "logs-updated", "files-written"]) {
    test(`killed right after ${step}: status shows the interrupted review, agent writes to its files wait for it, and reject runs again to completion`, async () => {
      await using h = await historyFixture();
      const original = await bigHistory(h);
      const killed = rejectKilledAfter(h.repo.root, step);
      expect(killed.signalCode).toBe("SIGKILL");
      const status = cli(["history", "status", "--json", "--root", h.repo.root]).json();
      expect(status.interrupted).toHaveLength(1);
      expect(cli(["history", "status", "--root", h.repo.root]).stdout).toContain("run `worksnap history recover`");

      const blocked = await h.call("conv_2_agent", [{ kind: "write", path: "src/f1.txt" as RepoPath, bytes: new TextEncoder().encode("x\n") }]).catch((e) => e);
      expect(blocked).toMatchObject({ code: "REPO_CHANGED", message: expect.stringContaining("history recover") });

      const again = cli(["history", "reject", "--conv", C, "--root", h.repo.root]);
      expect(again.stderr).toBe("");
      expect(again.code).toBe(0);
      expect(again.stdout).toContain("completed interrupted review");
      expect(h.tree()).toEqual(original);
      expect(statuses(h.repo.root)).toEqual(["rejected"]);
      expect(cli(["history", "status", "--json", "--root", h.repo.root]).json().interrupted).toEqual([]);
      // The history agrees with the disk again: re-accepting every edit (by id: --conv leaves rejected ones) replays cleanly.
      const ids = cli(["history", "status", "--json", "--root", h.repo.root]).json().entries.map((e: { edit_id: string }) => e.edit_id);
      expect(cli(["history", "accept", ...ids, "--root", h.repo.root]).code).toBe(0);
      expect(h.read("moved/f0.txt")).toContain("inserted");
    }, 60_000);
  }

  test("killed at arbitrary moments: every re-run completes to the same result", async () => {
    const delays = [0, 20, 60, 150];
    await Promise.all(
      delays.map(async (delay) => {
        await using h = await historyFixture();
        const original = await bigHistory(h);
        const proc = Bun.spawn([requireBinary(), "history", "reject", "--conv", C, "--root", h.repo.root], { stdout: "pipe", stderr: "pipe" });
        await Bun.sleep(delay);
        proc.kill("SIGKILL");
        await proc.exited;
        const again = Bun.spawn([requireBinary(), "history", "reject", "--conv", C, "--root", h.repo.root], { stdout: "pipe", stderr: "pipe", env: { ...process.env, NO_COLOR: "1" } });
        expect(await again.exited).toBe(0);
        expect(h.tree()).toEqual(original);
        expect(statuses(h.repo.root)).toEqual(["rejected"]);
      }),
    );
  }, 120_000);

  test("recover finishes an interrupted review on its own", async () => {
    await using h = await historyFixture();
    const original = await bigHistory(h);
    rejectKilledAfter(h.repo.root, "logs-updated");
    const r = cli(["history", "recover", "--root", h.repo.root, "--json"]).json();
    expect(r.recovered).toHaveLength(1);
    expect(r.files.length).toBeGreaterThan(FILES - 1);
    expect(h.tree()).toEqual(original);
    expect(cli(["history", "recover", "--root", h.repo.root]).stdout).toBe("no interrupted review\n");
  }, 60_000);
});
