import { compareUtf8 } from "../../core/byte-order";
import type { Workspace } from "../workspace";
import { readCommitted } from "./committed-files";
import { type Learning, type ViolationRecord, loadLearnings, parseLearningLines, promotedPatterns } from "./memory-store";
import { wordsOf } from "./risk";

/** The team's shared learnings: committed, read from HEAD (the work tree outside git), never written by worksnap. */
export const TEAM_LEARNINGS = ".worksnap/learnings.jsonl";

export type MemoryMatch =
  | { kind: "learning"; learning: Learning; score: number; because: string[] }
  | { kind: "pattern"; pattern: ViolationRecord; score: number; because: string[] };

export interface MatchQuery {
  title: string;
  keywords: readonly string[];
  files: readonly string[];
}

/** Words too common in task titles and paths to say anything about relevance. */
const STOP = new Set([
  "the", "and", "for", "with", "from", "into", "this", "that", "when", "not", "but", "are", "was", "all", "any", "can", "use",
  "fix", "add", "bug", "new", "make", "update", "change", "remove", "src", "lib", "test", "tests", "spec", "index", "main",
  "ts", "tsx", "js", "jsx", "mjs", "py", "go", "rs", "md", "json", "yaml", "yml", "toml", "txt", "file", "files", "code",
]);

function significant(words: Iterable<string>): Set<string> {
  const out = new Set<string>();
  for (const w of words) if (w.length >= 3 && !STOP.has(w)) out.add(w);
  return out;
}

const baseOf = (p: string) => p.slice(p.lastIndexOf("/") + 1);

/**
 * The learnings and promoted patterns that match a task: they share a
 * significant word with its title, keywords or file paths, or name one of
 * its files (by path, or by file name). A file match weighs 3, each shared
 * word 1. The best `limit`, ties broken by recency (then by id).
 */
export async function matchMemory(ws: Workspace, q: MatchQuery, head?: string, limit = 3): Promise<MemoryMatch[]> {
  const want = significant([...wordsOf(q.title), ...q.keywords.flatMap(wordsOf), ...q.files.flatMap(wordsOf)]);
  const files = new Set(q.files);
  const bases = new Set(q.files.map(baseOf));
  const score = (text: string, theirFiles: readonly string[]): { score: number; because: string[] } => {
    const because: string[] = [];
    let s = 0;
    for (const f of theirFiles) {
      if (files.has(f) || bases.has(baseOf(f))) {
        s += 3;
        because.push(f);
      }
    }
    // The words of the files it was about count as its words too.
    for (const w of significant([...wordsOf(text), ...theirFiles.flatMap(wordsOf)])) {
      if (want.has(w)) {
        s += 1;
        because.push(w);
      }
    }
    return { score: s, because };
  };
  const out: (MemoryMatch & { at: string; key: string })[] = [];
  for (const l of [...loadLearnings(ws), ...(await teamLearnings(ws, head))]) {
    const m = score(`${l.trigger} ${l.action}`, l.files ?? []);
    if (m.score > 0) out.push({ kind: "learning", learning: l, ...m, at: l.created_at, key: l.id });
  }
  for (const p of promotedPatterns(ws)) {
    const text = [p.type, p.prevention ?? "", ...p.occurrences.map((o) => o.description)].join(" ");
    const m = score(text, p.files);
    if (m.score > 0) out.push({ kind: "pattern", pattern: p, ...m, at: p.last_at, key: p.type });
  }
  out.sort((a, b) => b.score - a.score || compareUtf8(b.at, a.at) || compareUtf8(a.key, b.key));
  return out.slice(0, limit).map(({ at: _at, key: _key, ...m }) => m as MemoryMatch);
}

async function teamLearnings(ws: Workspace, head: string | undefined): Promise<Learning[]> {
  const read = await readCommitted(ws, [TEAM_LEARNINGS], head);
  const text = read.files.get(TEAM_LEARNINGS);
  return text === undefined ? [] : parseLearningLines(text, "team");
}
