/** Collections and memory figures for tests of memory the native module hands to JavaScript. */
import { expect } from "bun:test";

/** Full collections and turns of the event loop, on which the native module's finalizers run. */
export async function collect(): Promise<void> {
  for (let k = 0; k < 3; k++) {
    Bun.gc(true);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Collections, then other memory allocated and written, so that anything freed too early is reused. */
export async function collectAndChurn(): Promise<void> {
  await collect();
  const churn: Buffer[] = [];
  for (let k = 0; k < 16; k++) churn.push(Buffer.alloc(4 << 20, 0xa5));
  expect(churn.every((b) => b[b.length - 1] === 0xa5)).toBe(true);
}

/** The process's resident set in MB, after collections. */
export async function rssMb(): Promise<number> {
  await collect();
  return process.memoryUsage().rss / 2 ** 20;
}
