import { chmodSync, existsSync, mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";

export interface TmpRepo extends AsyncDisposable {
  root: string;
  /** Runs git in the repo with fixed identity and dates; throws on failure. Returns stdout. */
  git(...args: string[]): string;
  write(path: string, content: string | Uint8Array, mode?: number): void;
  symlink(path: string, target: string): void;
  commit(message?: string): string;
  /** A path next to the repository (its root followed by `suffix`, say ".patch"), removed with it. */
  beside(suffix: string): string;
}

const GIT_IDENTITY = {
  GIT_AUTHOR_NAME: "Test",
  GIT_AUTHOR_EMAIL: "test@example.com",
  GIT_COMMITTER_NAME: "Test",
  GIT_COMMITTER_EMAIL: "test@example.com",
  GIT_AUTHOR_DATE: "2026-01-01T00:00:00Z",
  GIT_COMMITTER_DATE: "2026-01-01T00:00:00Z",
  GIT_CONFIG_NOSYSTEM: "1",
  GIT_CONFIG_GLOBAL: "/dev/null",
};

export function runGit(cwd: string, args: string[], env: Record<string, string> = {}): string {
  const r = Bun.spawnSync(["git", ...args], { cwd, env: { ...process.env, ...GIT_IDENTITY, ...env }, stdout: "pipe", stderr: "pipe" });
  if (r.exitCode !== 0) throw new Error(`git ${args.join(" ")} failed: ${r.stderr.toString()}`);
  return r.stdout.toString();
}

/** A fresh directory under the system temp dir, removed on dispose. `name` may contain spaces/Unicode. */
export function tmpDir(name = "ws-"): { path: string } & AsyncDisposable {
  const path = mkdtempSync(join(tmpdir(), name));
  return { path, [Symbol.asyncDispose]: async () => rmSync(path, { recursive: true, force: true }) };
}

/**
 * Removes a repository a detached process of ours may still be writing to (the CLI's hand-off makes spare
 * files in `.mcp/tmp` after the command exits): a removal that meets a file created meanwhile (ENOTEMPTY,
 * or a directory left behind without an error) is tried again.
 */
async function removeTree(root: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      rmSync(root, { recursive: true, force: true });
      if (!existsSync(root)) return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "ENOTEMPTY") throw err;
    }
    if (attempt >= 50) throw new Error(`${root} could not be removed: something keeps writing in it`);
    await Bun.sleep(20);
  }
}

/** `await using repo = await tmpRepo()`: a real git repository in a temp dir (or a plain dir with git:false). */
export async function tmpRepo(opts: { git?: boolean; name?: string } = {}): Promise<TmpRepo> {
  const root = mkdtempSync(join(tmpdir(), opts.name ?? "ws-repo-"));
  if (opts.git !== false) runGit(root, ["init", "-q", "-b", "main"]);
  const besides = new Set<string>();
  const repo: TmpRepo = {
    root,
    git: (...args) => runGit(root, args),
    write(path, content, mode) {
      const abs = join(root, path);
      mkdirSync(dirname(abs), { recursive: true });
      writeFileSync(abs, content);
      if (mode !== undefined) chmodSync(abs, mode);
    },
    symlink(path, target) {
      const abs = join(root, path);
      mkdirSync(dirname(abs), { recursive: true });
      symlinkSync(target, abs);
    },
    commit(message = "commit") {
      runGit(root, ["add", "-A"]);
      runGit(root, ["commit", "-q", "--allow-empty", "-m", message]);
      return runGit(root, ["rev-parse", "HEAD"]).trim();
    },
    beside(suffix) {
      const path = `${root}${suffix}`;
      besides.add(path);
      return path;
    },
    [Symbol.asyncDispose]: async () => {
      try {
        Bun.spawnSync(["chmod", "-R", "u+rwX", root]);
      } finally {
        for (const p of besides) rmSync(p, { recursive: true, force: true });
        await removeTree(root);
      }
    },
  };
  return repo;
}
