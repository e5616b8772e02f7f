import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "bun:test";

const GOLDEN_DIR = join(import.meta.dir, "..", "golden");

/** Compares with test/golden/<name>; UPDATE_GOLDEN=1 rewrites the file instead. */
export function expectGolden(name: string, actual: string): void {
  const file = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === "1" || !existsSync(file)) {
    if (!process.env.UPDATE_GOLDEN && process.env.CI) throw new Error(`golden file ${name} is missing`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
  }
  expect(actual).toBe(readFileSync(file, "utf8"));
}
