import { compareUtf8 } from "../../core/byte-order";
import { type ImportGraph, isTestFile } from "./import-graph";

/** Dependents listed at most; past this the answer says how many more there were. */
export const IMPACT_CAP = 200;

export interface Impact {
  /** Files that import a changed file, directly or through others, nearest first (then by path). */
  dependents: { path: string; depth: number }[];
  /** How many dependents there were in all (more than listed when capped). */
  total: number;
  /** The test files among all the dependents (and changed test files), sorted. */
  tests: string[];
}

/** Reverse breadth-first search from the changed files over every import (type-only ones included). */
export function impactOf(graph: ImportGraph, changed: readonly string[]): Impact {
  const reverse = new Map<string, string[]>();
  for (const [from, tos] of graph.edges) for (const to of tos.keys()) reverse.set(to, [...(reverse.get(to) ?? []), from]);
  const depth = new Map<string, number>();
  const start = new Set(changed);
  let frontier = [...changed];
  for (let d = 1; frontier.length > 0; d++) {
    const next: string[] = [];
    for (const f of frontier) {
      for (const dep of reverse.get(f) ?? []) {
        if (start.has(dep) || depth.has(dep)) continue;
        depth.set(dep, d);
        next.push(dep);
      }
    }
    frontier = next;
  }
  const all = [...depth.entries()].map(([path, d]) => ({ path, depth: d })).sort((a, b) => a.depth - b.depth || compareUtf8(a.path, b.path));
  const tests = [...new Set([...all.map((x) => x.path), ...changed].filter(isTestFile))].sort(compareUtf8);
  return { dependents: all.slice(0, IMPACT_CAP), total: all.length, tests };
}

export interface Cycle {
  /** The files of the cycle in import order, starting at a changed file (the first file is not repeated at the end). */
  path: string[];
  /** true when every edge of the cycle existed at the task's start too. */
  preexisting: boolean;
}

/**
 * Import cycles through the changed files: Tarjan's strongly connected
 * components over the runtime imports (type-only TypeScript imports are no
 * runtime cycle), then, for each changed file in a component, its shortest
 * cycle. `before` holds the edges the changed files had at the task's start:
 * a cycle all of whose edges existed then is pre-existing.
 */
export function cyclesThrough(graph: ImportGraph, changed: readonly string[], before: Map<string, Map<string, boolean>>, cap = 10): Cycle[] {
  const runtime = (from: string): string[] => [...(graph.edges.get(from) ?? new Map()).entries()].filter(([, typeOnly]) => !typeOnly).map(([to]) => to);
  const component = tarjan([...graph.edges.keys()].sort(compareUtf8), runtime);
  const out: Cycle[] = [];
  const seen = new Set<string>();
  for (const c of [...changed].sort(compareUtf8)) {
    const comp = component.get(c);
    if (comp === undefined) continue;
    const members = new Set([...component.entries()].filter(([, id]) => id === comp).map(([p]) => p));
    const selfLoop = runtime(c).includes(c);
    if (members.size < 2 && !selfLoop) continue;
    const path = shortestCycle(c, runtime, members);
    if (!path) continue;
    const key = [...path].sort(compareUtf8).join("\0");
    if (seen.has(key)) continue;
    seen.add(key);
    const edgeExisted = (from: string, to: string) => {
      const old = before.has(from) ? before.get(from) : graph.edges.get(from);
      return old?.has(to) === true && old.get(to) === false;
    };
    const preexisting = path.every((p, i) => edgeExisted(p, path[(i + 1) % path.length] as string));
    out.push({ path, preexisting });
    if (out.length >= cap) break;
  }
  return out;
}

/** Component ids by node (iterative Tarjan, so deep graphs do not overflow the stack). */
function tarjan(nodes: string[], next: (n: string) => string[]): Map<string, number> {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const comp = new Map<string, number>();
  let counter = 0;
  let compId = 0;
  for (const root of nodes) {
    if (index.has(root)) continue;
    const work: { node: string; succ: string[]; i: number }[] = [];
    const open = (n: string) => {
      index.set(n, counter);
      low.set(n, counter);
      counter++;
      stack.push(n);
      onStack.add(n);
      work.push({ node: n, succ: next(n), i: 0 });
    };
    open(root);
    while (work.length > 0) {
      const top = work[work.length - 1] as { node: string; succ: string[]; i: number };
      if (top.i < top.succ.length) {
        const w = top.succ[top.i++] as string;
        if (!index.has(w)) open(w);
        else if (onStack.has(w)) low.set(top.node, Math.min(low.get(top.node) as number, index.get(w) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(top.node) as number));
      if (low.get(top.node) === index.get(top.node)) {
        for (;;) {
          const w = stack.pop() as string;
          onStack.delete(w);
          comp.set(w, compId);
          if (w === top.node) break;
        }
        compId++;
      }
    }
  }
  return comp;
}

/** The shortest path from `start` back to itself inside its component (breadth-first, successors in byte order). */
function shortestCycle(start: string, next: (n: string) => string[], members: Set<string>): string[] | null {
  const parent = new Map<string, string>();
  const queue = [start];
  for (let q = 0; q < queue.length; q++) {
    const n = queue[q] as string;
    for (const w of next(n).sort(compareUtf8)) {
      if (!members.has(w)) continue;
      if (w === start) {
        const path = [n];
        for (let p = n; p !== start; ) {
          p = parent.get(p) as string;
          path.push(p);
        }
        return path.reverse();
      }
      if (!parent.has(w) && w !== start) {
        parent.set(w, n);
        queue.push(w);
      }
    }
  }
  return null;
}
