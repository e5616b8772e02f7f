/**
 * The JIT policy of a process, decided once before its command runs: in a
 * one-shot command (every command but `serve`) the functions a capture runs
 * once or more for each of its paths, declared where they are defined
 * (core/per-path.ts), are kept out of JavaScriptCore's last tier (FTL). In a
 * capture of 90,000 paths they are the ones JSC compiles with FTL
 * (BUN_JSC_reportFTLCompileTimes=1; BUN_JSC_dumpSourceAtDFGTime=1 names an
 * anonymous one), on its compiler thread, beside the capture's two busy
 * cores; the FTL code comes too late in a run of about a second to win back
 * its compilation: a cold capture 1.215 s to 1.170 s in ten interleaved pairs
 * when the list was first made, as much as turning FTL off for the whole
 * process (BUN_JSC_useFTLJIT=0: 1.165 s), which a compiled binary cannot do
 * from inside; 1.145 to 1.075 s when the methods that fold outcomes and
 * encode the manifest as they come joined it. They still reach the DFG tier.
 * A server (long-running, where the last tier pays) keeps FTL for every
 * function.
 */
import { noFTL } from "bun:jsc";
import { setPerPathPolicy } from "../core/per-path";

/**
 * How much more reluctant than normal JavaScriptCore's tiers are for a whole command, from before its modules
 * load (Bun.unsafe.setJITPolicy scales every tier-up threshold): `apply` spends its time in native calls and
 * runs its JavaScript a few hundred times per file at most (once per file or hunk of the patch), where compiling
 * it costs more than it returns. The CLI's apply of the 500-file, 5,000-hunk patch, shuffled interleaved rounds
 * against the normal policy: 44 ms less at 100 (faster in 11 of 11, the scale set where this is called), 25-27
 * ms less at 100 or 1,000 and 8 ms at 10 when set as the command starts (after its modules loaded). Loops of a
 * larger patch still reach the baseline tier after about a hundred times as many runs. Commands whose loops run
 * over every path of a tree (a capture, grep, an export) keep the normal policy.
 */
const RELUCTANT: Readonly<Record<string, number>> = { apply: 100 };

export function startJitPolicy(command: string): void {
  const scale = RELUCTANT[command];
  if (scale !== undefined) Bun.unsafe.setJITPolicy(scale);
}

export function decideJitPolicy(oneShot: boolean): void {
  setPerPathPolicy(oneShot ? (fn) => void noFTL(fn as (...args: unknown[]) => unknown) : null);
}
