/**
 * Property: for random create/edit/move/delete sequences in one or more
 * conversations, and random accept/reject decisions, the work tree after each
 * review equals an independent model that replays only the kept operations
 * from the starting files; or the review refuses, names exactly the edits the
 * model finds inapplicable, and leaves every byte and every status as it was.
 *
 * The model knows nothing of diffs: an edit is "replace slot token X by Y" or
 * "insert these lines after filler F", applied to a file identity that moves
 * with the file, so it is an independent statement of what rejecting an edit
 * should mean. Files are built so that edits never share diff context (blocks
 * of a slot line and seven unique filler lines; each block grows at most
 * once), so every conflict is a real dependency the model sees too.
 */
import { expect, test } from "bun:test";
import fc from "fast-check";
import type { RepoPath } from "../../../src/core/repo-path";
import type { WriteChange } from "../../../src/ops/write/write-path";
import { historyFixture, type HistoryFixture } from "./helpers";

type Op =
  | { id: string; kind: "create"; lineage: string; path: string; lines: string[] }
  | { id: string; kind: "slot"; lineage: string; old: string; now: string }
  | { id: string; kind: "grow"; lineage: string; after: string; insert: string[] }
  | { id: string; kind: "move"; lineage: string; to: string; slot?: { old: string; now: string } }
  | { id: string; kind: "delete"; lineage: string }
  /** A person appended a line by hand (outside the history); never rejectable. */
  | { id: string; kind: "outside"; lineage: string; line: string };

interface MFile {
  lineage: string;
  path: string;
  lines: string[];
}

/** The independent model: replays kept ops; an op that cannot apply is a conflict (and is skipped, as --cascade would). */
function model(initial: MFile[], ops: Op[], rejected: Set<string>): { files: MFile[]; tree: Record<string, string>; conflicts: string[]; fatal: string[] } {
  const files = new Map<string, MFile>(initial.map((f) => [f.lineage, { ...f, lines: [...f.lines] }]));
  const atPath = (p: string) => [...files.values()].find((f) => f.path === p);
  const conflicts: string[] = [];
  const fatal: string[] = [];
  for (const op of ops) {
    if (rejected.has(op.id)) continue;
    const f = op.kind === "create" ? undefined : files.get(op.lineage);
    let ok = true;
    if (op.kind === "outside") {
      if (f) f.lines.push(op.line);
      else fatal.push(op.id);
      continue;
    }
    if (op.kind === "create") {
      if (atPath(op.path)) ok = false;
      else files.set(op.lineage, { lineage: op.lineage, path: op.path, lines: [...op.lines] });
    } else if (!f) ok = false;
    else if (op.kind === "slot") {
      const i = f.lines.indexOf(op.old);
      if (i < 0) ok = false;
      else f.lines[i] = op.now;
    } else if (op.kind === "grow") {
      const i = f.lines.indexOf(op.after);
      if (i < 0) ok = false;
      else f.lines.splice(i + 1, 0, ...op.insert);
    } else if (op.kind === "move") {
      const taken = atPath(op.to);
      const i = op.slot ? f.lines.indexOf(op.slot.old) : 0;
      if ((taken && taken !== f) || i < 0) ok = false;
      else {
        f.path = op.to;
        if (op.slot) f.lines[i] = op.slot.now;
      }
    } else files.delete(op.lineage);
    if (!ok) conflicts.push(op.id);
  }
  const tree: Record<string, string> = {};
  for (const f of [...files.values()].sort((a, b) => (a.path < b.path ? -1 : 1))) tree[f.path] = f.lines.map((l) => `${l}\n`).join("");
  return { files: [...files.values()], tree, conflicts, fatal };
}

const PATHS = ["a.txt", "b.txt", "c.txt", "d/e.txt", "d/f.txt", "g/h/i.txt"];
const CONVS = ["conv_1_aaaa", "conv_2_bbbb", "conv_3_cccc"];

class Run {
  /** What is on disk, as the generator sees it (the model's files). */
  current = new Map<string, MFile>();
  ops: Op[] = [];
  initial: MFile[] = [];
  statuses = new Map<string, "pending" | "accepted" | "rejected">();
  private counter = 0;
  private grown = new Set<string>();

  constructor(
    readonly h: HistoryFixture,
    readonly g: fc.GeneratorValue,
  ) {}

  fresh(tag: string): string {
    return `${tag}${++this.counter}`;
  }

  block(): string[] {
    const b = this.fresh("b");
    return [`slot ${b} v0`, ...Array.from({ length: 7 }, (_, i) => `filler ${b}.${i + 1}`)];
  }

  seed(): void {
    const n = this.g(fc.integer, { min: 0, max: 2 });
    for (let i = 0; i < n; i++) {
      const path = PATHS[i]!;
      const lines = Array.from({ length: this.g(fc.integer, { min: 1, max: 3 }) }, () => this.block()).flat();
      this.h.repo.write(path, lines.map((l) => `${l}\n`).join(""));
      const f = { lineage: `init:${path}`, path, lines };
      this.current.set(path, f);
      this.initial.push({ ...f, lines: [...lines] });
    }
  }

  private pick<T>(xs: T[]): T {
    return xs[this.g(fc.integer, { min: 0, max: xs.length - 1 })]!;
  }

  private content(f: MFile): Uint8Array {
    return new TextEncoder().encode(f.lines.map((l) => `${l}\n`).join(""));
  }

  private slotEdit(f: MFile): { old: string; now: string; lines: string[] } {
    const slots = f.lines.filter((l) => l.startsWith("slot "));
    const old = this.pick(slots);
    const now = `${old.split(" v")[0]} v${this.fresh("")}`;
    return { old, now, lines: f.lines.map((l) => (l === old ? now : l)) };
  }

  /** One random tool call through the real write path, mirrored as a model op. */
  async step(): Promise<void> {
    const conv = this.pick(CONVS);
    const existing = [...this.current.values()];
    const free = PATHS.filter((p) => !this.current.has(p) && !PATHS.some((q) => this.current.has(q) && (p.startsWith(`${q}/`) || q.startsWith(`${p}/`))));
    const kinds = [...(free.length > 0 ? ["create", "create"] : []), ...(existing.length > 0 ? ["slot", "slot", "slot", "grow", "move", "delete", "outside"] : [])];
    const kind = this.pick(kinds);
    const call = async (changes: WriteChange[], tool: string) => (await this.h.call(conv, changes, tool))[0]!;
    if (kind === "create") {
      const path = this.pick(free);
      const lines = Array.from({ length: this.g(fc.integer, { min: 1, max: 3 }) }, () => this.block()).flat();
      const f: MFile = { lineage: "", path, lines };
      const id = await call([{ kind: "write", path: path as RepoPath, bytes: this.content(f) }], "write_file");
      f.lineage = id;
      this.current.set(path, f);
      this.ops.push({ id, kind: "create", lineage: id, path, lines: [...lines] });
    } else {
      const f = this.pick(existing);
      if (kind === "outside") {
        // Edited by hand, then the agent edits the same file again: the change sits between recorded edits.
        const line = `outside ${this.fresh("o")}`;
        f.lines = [...f.lines, line];
        this.h.repo.write(f.path, this.content(f));
        this.ops.push({ id: this.fresh("outside-"), kind: "outside", lineage: f.lineage, line });
        const e = this.slotEdit(f);
        const id = await call([{ kind: "write", path: f.path as RepoPath, bytes: this.content({ ...f, lines: e.lines }), operation: "edit" }], "edit_file_diff");
        f.lines = e.lines;
        this.ops.push({ id, kind: "slot", lineage: f.lineage, old: e.old, now: e.now });
      } else if (kind === "slot") {
        const e = this.slotEdit(f);
        const op = this.g(fc.boolean) ? "replace" : "edit";
        const id = await call([{ kind: "write", path: f.path as RepoPath, bytes: this.content({ ...f, lines: e.lines }), operation: op }], op === "edit" ? "edit_file_diff" : "write_file");
        f.lines = e.lines;
        this.ops.push({ id, kind: "slot", lineage: f.lineage, old: e.old, now: e.now });
      } else if (kind === "grow") {
        const blocks = f.lines.filter((l) => l.startsWith("filler ") && l.endsWith(".4") && !this.grown.has(l));
        if (blocks.length === 0) return;
        const after = this.pick(blocks);
        this.grown.add(after);
        const insert = Array.from({ length: this.g(fc.integer, { min: 1, max: 3 }) }, () => `grown ${this.fresh("g")}`);
        const lines = [...f.lines];
        lines.splice(lines.indexOf(after) + 1, 0, ...insert);
        const id = await call([{ kind: "write", path: f.path as RepoPath, bytes: this.content({ ...f, lines }), operation: "edit" }], "edit_file_diff");
        f.lines = lines;
        this.ops.push({ id, kind: "grow", lineage: f.lineage, after, insert });
      } else if (kind === "move") {
        if (free.length === 0) return;
        const to = this.pick(free);
        const withEdit = this.g(fc.boolean);
        const e = withEdit ? this.slotEdit(f) : undefined;
        const change: WriteChange = { kind: "move", from: f.path as RepoPath, path: to as RepoPath };
        if (e) change.bytes = this.content({ ...f, lines: e.lines });
        const id = await call([change], withEdit ? "edit_file_diff" : "move_file");
        this.current.delete(f.path);
        f.path = to;
        if (e) f.lines = e.lines;
        this.current.set(to, f);
        this.ops.push(e ? { id, kind: "move", lineage: f.lineage, to, slot: { old: e.old, now: e.now } } : { id, kind: "move", lineage: f.lineage, to });
      } else {
        const id = await call([{ kind: "delete", path: f.path as RepoPath }], "delete_file");
        this.current.delete(f.path);
        this.ops.push({ id, kind: "delete", lineage: f.lineage });
      }
    }
    this.statuses.set(this.ops[this.ops.length - 1]!.id, "pending");
  }

  rejectedSet(): Set<string> {
    return new Set([...this.statuses].filter(([, s]) => s === "rejected").map(([id]) => id));
  }

  /** Mirrors the model's files back into the generator's view of the disk. */
  resync(): void {
    const m = model(this.initial, this.ops, this.rejectedSet());
    this.current = new Map(m.files.map((f) => [f.path, f]));
  }

  /** A review through the real op, checked against the model. */
  async review(action: "accept" | "reject", ids: string[], cascade: boolean): Promise<"done" | "refused" | "nothing"> {
    if (ids.length === 0) return "nothing";
    const to = action === "accept" ? "accepted" : "rejected";
    const next = new Set(this.rejectedSet());
    for (const id of ids) {
      if (to === "rejected") next.add(id);
      else next.delete(id);
    }
    const want = model(this.initial, this.ops, next);
    const treeBefore = this.h.tree();
    const logBefore = await this.h.entries();
    const outcome = await this.h.review({ action, editIds: ids, cascade }).then(
      (r) => ({ ok: true as const, r }),
      (err) => ({ ok: false as const, err }),
    );
    if (want.fatal.length > 0) {
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return "done";
      expect(outcome.err.code).toBe("REPO_CHANGED");
      expect(outcome.err.details.reason).toBe("conflict");
      expect(this.h.tree()).toEqual(treeBefore);
      expect(await this.h.entries()).toEqual(logBefore);
      return "refused";
    }
    const refuse = want.conflicts.length > 0 && (action === "accept" || !cascade);
    if (refuse) {
      expect(outcome.ok).toBe(false);
      if (outcome.ok) return "done";
      expect(outcome.err.code).toBe("INVALID_ARGUMENT");
      expect(outcome.err.details.reason).toBe("dependent_edits");
      expect([...new Set((outcome.err.details.conflicts as { edit_id: string }[]).map((c) => c.edit_id))].sort()).toEqual([...want.conflicts].sort());
      expect(this.h.tree()).toEqual(treeBefore);
      expect(await this.h.entries()).toEqual(logBefore);
      return "refused";
    }
    if (!outcome.ok) throw outcome.err;
    expect(outcome.r.cascaded.sort()).toEqual([...want.conflicts].sort());
    for (const id of ids) this.statuses.set(id, to);
    for (const id of want.conflicts) this.statuses.set(id, "rejected");
    const tree = this.h.tree();
    expect(tree).toEqual(want.tree);
    const logged = new Map((await this.h.entries()).map((e) => [e.edit_id, e.status]));
    for (const [id, s] of this.statuses) expect(logged.get(id)).toBe(s);
    this.resync();
    return "done";
  }

  pickSubset(ids: string[]): string[] {
    return ids.filter(() => this.g(fc.integer, { min: 0, max: 2 }) === 0);
  }
}

const RUNS = Number(process.env.HISTORY_PROPERTY_RUNS ?? 20);

test(
  "reject/accept of random histories equals the model of the kept operations, or refuses naming exactly the dependent edits",
  async () => {
    let refusals = 0;
    let successes = 0;
    await fc.assert(
      fc.asyncProperty(fc.gen(), async (g) => {
        await using h = await historyFixture();
        const run = new Run(h, g);
        run.seed();
        const n1 = g(fc.integer, { min: 1, max: 10 });
        for (let i = 0; i < n1; i++) await run.step();
        // Round 1: reject some edits (maybe with --cascade).
        const ids1 = run.pickSubset(run.ops.filter((o) => o.kind !== "outside").map((o) => o.id));
        const first = await run.review("reject", ids1, g(fc.boolean));
        if (first === "refused") refusals++;
        if (first === "done") successes++;
        // The agent goes on; then round 2: re-accept some rejected edits, reject some others.
        const n2 = g(fc.integer, { min: 0, max: 5 });
        for (let i = 0; i < n2; i++) await run.step();
        await run.review("accept", run.pickSubset([...run.rejectedSet()]), false);
        const kept = [...run.statuses].filter(([, s]) => s !== "rejected").map(([id]) => id);
        await run.review("reject", run.pickSubset(kept), g(fc.boolean));
        // Whatever happened, the history still agrees with the disk: accepting everything pending finds no outside change.
        const pending = [...run.statuses].filter(([, s]) => s === "pending").map(([id]) => id);
        if (pending.length > 0) await h.review({ action: "accept", editIds: pending });
      }),
      { numRuns: RUNS, seed: Number(process.env.HISTORY_PROPERTY_SEED ?? 20260101), endOnFailure: true },
    );
    // The property must not pass by refusing everything.
    expect(successes).toBeGreaterThan(RUNS / 3);
    expect(refusals).toBeGreaterThan(0);
  },
  600_000,
);
