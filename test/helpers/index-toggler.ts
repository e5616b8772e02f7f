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
  const toggler = Bun.spawn(["sh", "-c", `while :; do git add ${list}; sleep ${pause}; git reset -q ${list}; sleep ${pause}; done`], {
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
    toggler.kill();
    await toggler.exited;
  }
  return seen;
}
