/** The search engine behind `snapshot_grep`: see engine.ts for the pipeline, query.ts for matching rules. */
export { grep } from "./engine";
export { compileQuery, escapeRegex, type CompiledQuery, type GrepOptions } from "./query";
export { fileCandidate, fileStream } from "./source";
export type { GrepCandidate, GrepMatch, GrepResult } from "./types";
