/**
 * The search engine behind `snapshot_grep`, the one entry the walk uses: see engine.ts for the pipeline,
 * query.ts for matching rules, read-ahead.ts for what a worktree grep reads before its walk is ready.
 */
export { grep, type GrepRunOptions } from "./engine";
export { compileQuery, DEFAULT_CHUNK_BYTES, escapeRegex, type CompiledQuery, type GrepOptions } from "./query";
export { startReadAhead, type ReadAhead } from "./read-ahead";
export { BINARY, NO_MATCH, READ, indexFilter, type IndexFilter, type Verdict } from "./index-select";
export { fileCandidate, fileStream } from "./source";
export type { GrepCandidate, GrepMatch, GrepResult } from "./types";
