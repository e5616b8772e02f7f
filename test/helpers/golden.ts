import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { expect } from "bun:test";

const GOLDEN_DIR = join(import.meta.dir, "..", "golden");

/** Compares with test/golden/<name>; UPDATE_GOLDEN=1 rewrites the file instead. */
export function expectGolden(name: string, actual: string): void {
  const file = join(GOLDEN_DIR, name);
  if (process.env.UPDATE_GOLDEN === "1") {
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, actual);
  }
  if (!existsSync(file)) throw new Error(`golden file ${name} is missing; run with UPDATE_GOLDEN=1 to create it`);
  expect(actual).toBe(readFileSync(file, "utf8"));
}
