import { describe, expect, test } from "bun:test";
import { existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { WorksnapError } from "../../src/core/errors";
import { ensureStateDir } from "../../src/repo/state-dir";
import { FORMAT_FILE, STATE_FORMAT, formatRefusal, readStateFormat } from "../../src/repo/state-format";
import { migrateStateDir } from "../../src/repo/state-migrate";
import { tmpDir } from "../helpers/tmp-repo";

function refusal(fn: () => unknown): WorksnapError {
  try {
    fn();
  } catch (err) {
    if (err instanceof WorksnapError) return err;
    throw err;
  }
  throw new Error("expected a refusal");
}

describe(".mcp/format", () => {
  test("a new .mcp/ records this binary's format", async () => {
    await using dir = tmpDir();
    const state = join(dir.path, ".mcp");
    ensureStateDir(state);
    expect(readFileSync(join(state, FORMAT_FILE), "utf8")).toBe(`${STATE_FORMAT}\n`);
    expect(readStateFormat(state)).toEqual({ format: STATE_FORMAT, marked: true });
  });

  test("a .mcp/ from before the number existed is format 1, used as it is, and gets the number written", async () => {
    await using dir = tmpDir();
    const state = join(dir.path, ".mcp");
    mkdirSync(join(state, "snapshots"), { recursive: true });
    writeFileSync(join(state, "snapshots", "keep.json"), "{}");
    expect(readStateFormat(state)).toEqual({ format: 1, marked: false });
    ensureStateDir(state);
    expect(readFileSync(join(state, FORMAT_FILE), "utf8")).toBe("1\n");
    expect(readFileSync(join(state, "snapshots", "keep.json"), "utf8")).toBe("{}");
  });

  test("a newer format is refused before anything is created in it", async () => {
    await using dir = tmpDir();
    const state = join(dir.path, ".mcp");
    mkdirSync(state);
    writeFileSync(join(state, FORMAT_FILE), `${STATE_FORMAT + 1}\n`);
    const e = refusal(() => ensureStateDir(state));
    expect(e.code).toBe("INVALID_ARGUMENT");
    expect(e.message).toContain(`state format ${STATE_FORMAT + 1}, written by a newer worksnap`);
    expect(e.message).toContain("Upgrade worksnap");
    expect(e.details).toMatchObject({ state_format: STATE_FORMAT + 1, supported_format: STATE_FORMAT });
    expect(readdirSync(state)).toEqual([FORMAT_FILE]);
    expect(() => migrateStateDir(state)).toThrow(/newer worksnap/);
    expect(readFileSync(join(state, FORMAT_FILE), "utf8")).toBe(`${STATE_FORMAT + 1}\n`);
  });

  test("a marker that is not a number is refused, not guessed", async () => {
    await using dir = tmpDir();
    const state = join(dir.path, ".mcp");
    mkdirSync(state);
    writeFileSync(join(state, FORMAT_FILE), "two\n");
    const e = refusal(() => ensureStateDir(state));
    expect(e.message).toContain("does not hold a state format number");
    expect(existsSync(join(state, "tmp"))).toBe(false);
  });

  test("an older format than the binary's names `worksnap migrate`", () => {
    const e = formatRefusal(STATE_FORMAT - 1)!;
    expect(e.message).toContain("worksnap migrate");
    expect(e.details).toMatchObject({ remedy: "worksnap migrate" });
    expect(formatRefusal(STATE_FORMAT)).toBeNull();
  });

  test("migrate writes the number into an unmarked .mcp/; --check changes nothing; a second run has nothing to do", async () => {
    await using dir = tmpDir();
    const state = join(dir.path, ".mcp");
    expect(migrateStateDir(state)).toMatchObject({ exists: false, steps: [] });
    mkdirSync(state);
    const checked = migrateStateDir(state, { check: true });
    expect(checked).toMatchObject({ exists: true, from: 1, to: STATE_FORMAT, was_marked: false, current: true });
    expect(checked.steps).toHaveLength(1);
    expect(existsSync(join(state, FORMAT_FILE))).toBe(false);
    expect(migrateStateDir(state)).toMatchObject({ from: 1, to: STATE_FORMAT, was_marked: false });
    expect(readFileSync(join(state, FORMAT_FILE), "utf8")).toBe(`${STATE_FORMAT}\n`);
    expect(migrateStateDir(state)).toMatchObject({ was_marked: true, steps: [] });
  });
});
