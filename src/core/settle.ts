/**
 * Waits for every promise, then throws the first rejection or returns the
 * values in order: unlike Promise.all, nothing is still running when the
 * caller hears of a failure (a hashing share, a read ahead).
 */
export async function settleAll<T extends readonly unknown[]>(promises: readonly [...T]): Promise<{ -readonly [K in keyof T]: Awaited<T[K]> }> {
  const results = await Promise.allSettled(promises);
  const failed = results.find((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed) throw failed.reason;
  return results.map((r) => (r as PromiseFulfilledResult<unknown>).value) as { -readonly [K in keyof T]: Awaited<T[K]> };
}
