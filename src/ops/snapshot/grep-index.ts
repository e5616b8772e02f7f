/**
 * Where a worktree grep may take a live file as its index blob, so the
 * trigram index can settle it unread: a clean tracked file (git status names
 * it nowhere) whose blob the index holds. The index holds a blob id only after
 * reading a work-tree file with that id and finding exactly the blob's bytes
 * (trigram-index/indexer.ts), which is the rule the blob map of captures
 * follows; on top of it, as for a capture's trust in clean files, nothing
 * may be set up to convert content between the work tree and blobs:
 * core.autocrlf off and no attributes file (tracked, untracked in the walk,
 * `info/attributes`, global or system). The repository-wide part of that
 * check costs two git processes, so a process keeps its answer for as long as
 * the index file and the configuration and attributes files are unchanged.
 */
import { homedir } from "node:os";
import { join } from "node:path";
import { contentConversionPossible } from "../../repo/content-conversion";
import { indexIdentity } from "../../repo/index-identity";
import type { RepoRoot } from "../../repo/root";
import { plainIndexOids, plainIndexPaths, type TreeEntry } from "../../repo/tree-scan";
import { READ, type IndexFilter } from "../grep";
import { commonDir, configStamp, gitConfigFiles } from "../../repo/common-dir";

const answers = new Map<string, { key: string; possible: boolean }>();

/** Whether git may convert content anywhere in the repository (configuration, attributes files known to git). */
export async function conversionConfigured(repo: RepoRoot): Promise<boolean> {
  if (!repo.gitDir) return false;
  const key = configurationKey(repo, repo.gitDir);
  const known = answers.get(repo.root);
  if (known && known.key === key) return known.possible;
  const possible = await contentConversionPossible(repo, []);
  if (key === configurationKey(repo, repo.gitDir)) answers.set(repo.root, { key, possible });
  return possible;
}

/** An attributes file among the walk's untracked files (a tracked one is seen by conversionConfigured). */
export function untrackedAttributes(entries: readonly TreeEntry[]): boolean {
  for (const e of entries) if (e.gitOid === undefined && (e.path === ".gitattributes" || e.path.endsWith("/.gitattributes"))) return true;
  return false;
}

function configurationKey(repo: RepoRoot, gitDir: string): string {
  const xdg = process.env.XDG_CONFIG_HOME || join(homedir(), ".config");
  // a linked work tree reads its attributes in the common directory
  const attributes = [join(commonDir(gitDir) ?? gitDir, "info", "attributes"), join(xdg, "git", "attributes"), "/etc/gitattributes"];
  const stamps = configStamp([...gitConfigFiles(gitDir), ...attributes]);
  return [indexIdentity(join(gitDir, "index")) ?? "-", process.env.GIT_ATTR_NOSYSTEM ?? "", stamps, repo.root].join("\0");
}

/** The listing's paths whose blob the index does not settle for the query: what a read ahead still reads. */
export function unsettled(listing: Uint8Array, index: IndexFilter): string[] {
  const paths = plainIndexPaths(listing);
  const verdicts = index.byGitOids(plainIndexOids(listing));
  const out: string[] = [];
  for (let i = 0; i < paths.length; i++) if (verdicts[i] === READ) out.push(paths[i] as string);
  return out;
}
