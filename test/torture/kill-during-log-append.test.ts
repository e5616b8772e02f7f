/**
 * A conversation's log grows by appends (repo/append-lines.ts): a process
 * appending large batches (600 entries, about 260 KB each) through the
 * history store is killed with SIGKILL at a random moment, again and again.
 * After every kill the log reads without an error, never loses an entry it
 * had, and holds whole lines only as far as a reader is concerned; the next
 * append (once the dead holder's lock is stale) cuts whatever unfinished line
 * the kill left, lands its own entries last, and leaves a log whose every
 * line is JSON.
 */
import { describe, expect, test } from "bun:test";
import { existsSync, readFileSync, utimesSync } from "node:fs";
import { join } from "node:path";
import { FsHistoryStore } from "../../src/ops/history/fs-history-store";
import type { LogEntry } from "../../src/ops/history/types";
import { tmpDir } from "../helpers/tmp-repo";
import { attempts, budgetMs } from "./scale";

const APPENDER = join(import.meta.dir, "..", "fixtures", "log-appender.ts");
const CONV = "conv_3_killed";

function entry(marker: string): LogEntry {
  return {
    edit_id: crypto.randomUUID(),
    conversation_id: CONV,
    tool_call_index: 1_000_000,
    timestamp: "2026-01-01T00:00:00.000001Z",
    operation: "create",
    file_path: `marker/${marker}.txt`,
    source_path: null,
    tool_name: "write_file",
    status: "pending",
    diff_file: null,
    checkpoint_file: null,
    hash_before: null,
    hash_after: "1".repeat(64),
  };
}

describe("kill -9 during a log's appends", () => {
  test(
    "every read after a kill succeeds and keeps what was there; the next append cuts an unfinished line and lands whole",
    async () => {
      await using dir = tmpDir("ws-logkill-");
      const stateDir = join(dir.path, ".mcp");
      const store = new FsHistoryStore(stateDir);
      await store.appendLog(CONV, [entry("first")]);
      const log = join(stateDir, "edit_history", "logs", `${CONV}.log`);
      const lock = join(stateDir, "edit_history", "locks", `${CONV}.lock`);
      let count = 1;
      for (let k = 0; k < attempts(10, 60); k++) {
        const appender = Bun.spawn([process.execPath, APPENDER, stateDir, CONV, "100000", "600"], { stdout: "ignore", stderr: "pipe" });
        await Bun.sleep(60 + Math.floor(Math.random() * 200)); // start-up, then somewhere among its appends
        appender.kill("SIGKILL");
        expect(await appender.exited).not.toBe(0);
        const read = await new FsHistoryStore(stateDir).readLog(CONV);
        expect(read.length).toBeGreaterThanOrEqual(count);
        expect(read[0]!.file_path).toBe("marker/first.txt");
        // the dead holder no longer refreshes its lock: stale, as after its 10 s
        if (existsSync(lock)) utimesSync(lock, new Date(Date.now() - 60_000), new Date(Date.now() - 60_000));
        const mine = [entry(`after-kill-${k}-a`), entry(`after-kill-${k}-b`)];
        await store.withLogLock([CONV], () => store.appendLog(CONV, mine));
        const after = await new FsHistoryStore(stateDir).readLog(CONV);
        expect(after.length).toBe(read.length + 2);
        expect(after.slice(-2).map((e) => e.edit_id)).toEqual(mine.map((e) => e.edit_id));
        const text = readFileSync(log, "utf8");
        expect(text.endsWith("\n")).toBe(true);
        const broken = text.slice(0, -1).split("\n").filter((line) => {
          try {
            JSON.parse(line);
            return false;
          } catch {
            return true;
          }
        });
        expect(broken).toEqual([]);
        count = after.length;
      }
      expect(count).toBeGreaterThan(1 + 2 * attempts(10, 60));
    },
    budgetMs(60_000, 600_000),
  );
});
