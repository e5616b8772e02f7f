/**
 * The JIT policy of a one-shot command (every command but `serve`): the
 * functions a cold capture calls once or more for each of its paths are kept
 * out of JavaScriptCore's last tier (FTL). In a capture of 90,000 paths they
 * are the ones JSC compiles with FTL (BUN_JSC_reportFTLCompileTimes), on its
 * compiler thread, beside the capture's two busy cores; the FTL code comes
 * too late in a run of about a second to win back its compilation: a cold
 * capture 1.215 s to 1.170 s in ten interleaved pairs (user CPU 1.315 s to
 * 1.260 s), as much as turning FTL off for the whole process
 * (BUN_JSC_useFTLJIT=0: 1.165 s), which a compiled binary cannot do from
 * inside. They still reach the DFG tier. A server (long-running, where the
 * last tier pays) keeps FTL for every function. The methods the capture
 * calls per path as outcomes come (a follower settled, a manifest entry
 * encoded, a read-ahead path found, a pack index looked up) joined the list
 * when they did: 1.145 to 1.075 s in 20 interleaved rounds.
 */
import { noFTL } from "bun:jsc";
import { compareUtf8 } from "../core/byte-order";
import { isReservedPath, mayFoldToReserved } from "../core/repo-path";
import { FollowerSettler, splitFollowers } from "../repo/blob-followers";
import { oidPrefixKey } from "../repo/git-blob-map";
import { ManifestEncoder } from "../repo/manifest";
import { outcomeOf } from "../repo/native-hash";
import { PackIndex } from "../repo/pack-index";
import { PrehashList } from "../repo/prehash";

export function keepCapturePathsOutOfFtl(): void {
  const perPath = [
    splitFollowers,
    outcomeOf,
    oidPrefixKey,
    compareUtf8,
    isReservedPath,
    mayFoldToReserved,
    // methods called once for each path (bracket access reaches the private ones)
    FollowerSettler.prototype["settle"],
    ManifestEncoder.prototype.add,
    PrehashList.prototype.find,
    PackIndex.prototype.holds,
  ];
  for (const f of perPath) noFTL(f as (...args: unknown[]) => unknown);
}
