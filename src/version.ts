import pkg from "../package.json" with { type: "json" };

/** What a build embeds about itself (scripts/compile.ts defines WORKSNAP_BUILD). */
export interface BuildInfo {
  /** The git commit built, `<12 hex>` with `-dirty` when tracked files differed from it; "unknown" outside git. */
  commit: string;
  /** The platform the executable was built for: linux-x64, linux-arm64, darwin-x64, darwin-arm64. */
  target: string;
  /** Empty when the native module is embedded; otherwise why it is not (`--version` says so). */
  nativeNote: string;
}

export const VERSION: string = pkg.version;

/** The build's facts, or, run from source (`bun src/main.ts`, tests), this machine's platform and no commit. */
export const BUILD: BuildInfo =
  typeof WORKSNAP_BUILD === "object" && WORKSNAP_BUILD !== null
    ? WORKSNAP_BUILD
    : { commit: "source", target: `${process.platform}-${process.arch}`, nativeNote: "" };
