/** The answer `answersWhileStaging` records for a call refused because the index kept changing. */
export const INDEX_BUSY = "refused: BUSY index_changing";

/**
 * `ask`'s answers, `times` over, while a second process stages and unstages `paths` (git add, git reset), pausing
 * `pauseMs` after each: an error is recorded as `refused: <code> <details.reason>` (INDEX_BUSY for the refusal to
 * retry).
 */
export async function answersWhileStaging(root: string, paths: string[], ask: () => Promise<string>, times = 40, pauseMs = 10): Promise<string[]> {
  const list = paths.join(" ");
  const pause = (pauseMs / 1000).toFixed(3);
  // on SIGTERM the shell ends after the git command it waits for (a trap runs once the foreground command is done):
  // killing it outright would leave that git running, holding index.lock past the end of this call
  const loop = `trap 'exit 0' TERM; while :; do git add ${list}; sleep ${pause}; git reset -q ${list}; sleep ${pause}; done`;
  const toggler = Bun.spawn(["sh", "-c", loop], {
    cwd: root,
    stdout: "ignore",
    stderr: "ignore",
  });
  const seen: string[] = [];
  try {
    for (let i = 0; i < times; i++) {
      try {
        seen.push(await ask());
      } catch (err) {
        const e = err as { code?: string; details?: { reason?: string } };
        seen.push(`refused: ${e.code} ${e.details?.reason}`);
      }
    }
  } finally {
    toggler.kill("SIGTERM");
    await toggler.exited;
  }
  return seen;
}
