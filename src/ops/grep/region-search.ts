/**
 * What one query searches a region with, and what reader threads check
 * before handing a file over: shared by the walk-order engine (engine.ts) and
 * the search ahead of the walk (read-ahead.ts).
 */
import { isBinary } from "../../core/binary";
import { asBuffer, literalScan, longestLine } from "./literal";
import type { CompiledQuery } from "./query";
import type { ReadFilter } from "./reader-pool";
import type { RegexSandbox } from "./regex-sandbox";
import { regexScan, type RegexScanJob, type RegionScan } from "./regex-scan";
import type { FileSearch, RegionSearch } from "./scan";

/** Worst-case backtracking tries the main thread spends on one region (RegexPlan.quadraticWays): milliseconds. */
const MAIN_TRIES = 2e7;
export const BINARY: FileSearch = { binary: true, matches: [], total: 0 };
export const NO_MATCH: FileSearch = { binary: false, matches: [], total: 0 };

/** What readers check before handing a file over: the query's literals, its regex plan, the size limit. */
export function readFilterOf(q: CompiledQuery): ReadFilter {
  const m = q.matcher;
  if (m.kind === "literal") return { literals: [m.needle], required: [], scan: null, limit: q.chunkBytes };
  return {
    literals: m.plan.literals,
    required: m.plan.required,
    scan:
      m.plan.inline || m.plan.quadraticWays !== null
        ? {
            source: m.plan.source,
            flags: m.plan.flags,
            perLine: m.plan.perLine,
            quadraticWays: m.plan.inline ? null : m.plan.quadraticWays,
            fold: m.plan.fold,
          }
        : null,
    limit: q.chunkBytes,
    folded:
      m.plan.literals === null && m.plan.fold
        ? { lower: new Uint8Array(Buffer.from(m.plan.fold.lower, "latin1")), guards: m.plan.fold.guards.map((g) => new Uint8Array(g)) }
        : null,
  };
}

export function regionSearch(q: CompiledQuery, sandbox: RegexSandbox | null): RegionSearch {
  const m = q.matcher;
  if (m.kind === "literal") return (region, max) => literalScan(region, m.needle, max);
  const { plan } = m;
  const job = (region: Uint8Array, maxRecords: number): RegexScanJob => ({
    source: plan.source,
    flags: plan.flags,
    perLine: plan.perLine,
    literals: plan.literals,
    required: plan.required,
    fold: plan.fold,
    region,
    maxRecords,
  });
  if (!sandbox) {
    const cache = new Map<string, RegExp>();
    return (region, max) => regexScan(job(region, max), cache);
  }
  const cache = new Map<string, RegExp>();
  const ways = plan.quadraticWays;
  const scan = (region: Uint8Array, max: number) => regexScan(job(region, max), cache);
  return (region, max): RegionScan | Promise<RegionScan> => {
    // the prefilter runs here, so only regions that can match cross the pipe
    const buf = asBuffer(region);
    if (!mayMatch(buf, plan.literals, plan.required)) return { starts: [], ends: [], count: 0 };
    if (ways !== null) {
      const longest = longestLine(buf);
      if (ways * longest * buf.length <= MAIN_TRIES) return scan(region, max);
      // short lines in a big region (a log): bounded slices, yielding between them
      const slice = Math.floor(MAIN_TRIES / (ways * Math.max(1, longest)));
      if (slice >= MIN_SLICE_BYTES) return scanInSlices(buf, slice, max, scan);
    }
    return sandbox.runRegion(region, max);
  };
}

/** The bytes hold one of `literals` (when known) and one string of each required set. */
function mayMatch(buf: Buffer, literals: Uint8Array[] | null, required: Uint8Array[][]): boolean {
  if (literals && !literals.some((lit) => buf.indexOf(lit) >= 0)) return false;
  return required.every((set) => set.some((lit) => buf.indexOf(lit) >= 0));
}

/** Quadratic-worst-case text below this many bytes per bounded slice goes to the regex child instead. */
const MIN_SLICE_BYTES = 16 * 1024;

/**
 * Scans a region in line-aligned slices of about `slice` bytes, letting the
 * event loop run between them, so the time budget and aborts stay prompt.
 * Matches never span lines, so the slices' matches are the region's.
 */
async function scanInSlices(
  buf: Buffer,
  slice: number,
  max: number,
  scan: (region: Uint8Array, max: number) => RegionScan,
): Promise<RegionScan> {
  const out: RegionScan = { starts: [], ends: [], count: 0 };
  for (let from = 0; from < buf.length; ) {
    let to = from + slice >= buf.length ? buf.length : buf.lastIndexOf(10, from + slice - 1) + 1;
    if (to <= from) to = buf.indexOf(10, from) + 1 || buf.length; // a line longer than the slice: take it whole
    const r = scan(buf.subarray(from, to), Math.max(0, max - out.starts.length));
    for (let k = 0; k < r.starts.length; k++) {
      out.starts.push(from + r.starts[k]!);
      out.ends.push(from + r.ends[k]!);
    }
    out.count += r.count;
    from = to;
    if (from < buf.length) await new Promise((resolve) => setImmediate(resolve));
  }
  return out;
}

/** A text file without a match, with the hash of its bytes when one was made. */
export function noMatch(sha256: string | undefined): FileSearch {
  return sha256 === undefined ? NO_MATCH : { ...NO_MATCH, sha256 };
}

/** Whether a file's candidate lines, searched on their own, give what the file would (see Speculation.run). */
export function searchableAlone(bytes: Uint8Array, lines: Uint32Array): boolean {
  if (isBinary(bytes)) return false;
  return lines[0] === 1 || !(bytes[0] === 0xef && bytes[1] === 0xbb && bytes[2] === 0xbf);
}

