/**
 * A one-shot write's file-system work after the answer (repo/tmp-reserve.ts,
 * HandOff): removing the files the write replaced and making spare files for
 * the next write are left to a detached process of our own, so the command
 * exits once its files are published, durable and recorded. As `git gc
 * --auto` detaches, this one never holds the terminal or the output pipe.
 */
import { join } from "node:path";
import { COMPILED } from "../core/compiled";
import { finishHandOff, type HandOff } from "../repo/tmp-reserve";
import type { Workspace } from "../ops/workspace";
import { UsageError } from "./args";

/** The hidden command the detached process runs: `worksnap __hand-off ROOT JSON`. */
export const HAND_OFF_COMMAND = "__hand-off";

/**
 * Starts the detached step for what `ws` left to do, if anything; call after
 * the answer is written and before closeWorkspace. Where no process can be
 * started, closeWorkspace does the work before the command exits.
 */
export function handOffInBackground(ws: Workspace): void {
  if (process.env.WORKSNAP_HAND_OFF === "0") return;
  const h = ws.reserve?.handOff();
  if (!h) return;
  try {
    // A compiled binary is its own entry point; `bun src/main.ts` runs the source again.
    const self = COMPILED ? [process.execPath] : [process.execPath, join(import.meta.dir, "..", "main.ts")];
    // Bun.spawn, not node:child_process, whose loading (with node:events) costs the command about 4 ms
    const child = Bun.spawn([...self, HAND_OFF_COMMAND, ws.repo.root, JSON.stringify(h)], { detached: true, stdio: ["ignore", "ignore", "ignore"] });
    child.unref();
  } catch {
    // not started: what the write left is a dead process's once we exit, removed by the next temp cleanup
  }
}

export async function cmdHandOff(argv: string[]): Promise<number> {
  const [root, json] = argv;
  if (root === undefined || json === undefined || argv.length !== 2) throw new UsageError(`${HAND_OFF_COMMAND} takes ROOT and the hand-off`);
  const h = JSON.parse(json) as HandOff;
  const names = (v: unknown) => Array.isArray(v) && v.every((x) => typeof x === "string");
  if (!names(h.entries) || !names(h.spent) || !(h.pool === null || typeof h.pool === "string") || !Number.isInteger(h.spares)) throw new UsageError("malformed hand-off");
  await finishHandOff(root, h);
  return 0;
}
