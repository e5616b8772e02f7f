import { isBinary } from "../../core/binary";
import { lineChanges, splitLines } from "../diff/line-diff";
import { bytesToByteString } from "../patch/byte-string";
import type { ChangePair } from "../snapshot/changes";
import type { Workspace } from "../workspace";
import type { PatternRule } from "./check-config";
import { DETECTORS, type Detector, type Finding, lineAt } from "./detectors";
import type { ViolationRecord } from "./memory-store";
import { languageOf } from "./import-graph";
import { scanTsImports } from "./imports-ts";

/** Files larger than this are not scanned by the detectors or parsed. */
const SCAN_MAX_BYTES = 2 * 1024 * 1024;

/** A changed file as the pattern checks see it: its text now and the 1-based lines the task added. */
export interface ScannedFile {
  path: string;
  text: string;
  added: Set<number>;
}

/** The text files changed since the start that still exist, with the lines added to each. */
export async function scannedFiles(ws: Workspace, pairs: readonly ChangePair[]): Promise<ScannedFile[]> {
  const out: ScannedFile[] = [];
  for (const p of pairs) {
    if (!p.to || p.to.mode === "120000") continue;
    const [before, after] = await Promise.all([p.from && p.from.mode !== "120000" ? ws.blobs.read(p.from.blob) : new Uint8Array(), ws.blobs.read(p.to.blob)]);
    if (after.length > SCAN_MAX_BYTES || isBinary(after)) continue;
    const added = new Set<number>();
    for (const c of lineChanges(splitLines(bytesToByteString(before)), splitLines(bytesToByteString(after)))) {
      for (let l = c.newStart; l < c.newEnd; l++) added.add(l + 1);
    }
    out.push({ path: p.change.path, text: new TextDecoder().decode(after), added });
  }
  return out;
}

/**
 * The pattern checks over the changed files: the built-in detectors, the
 * repository's own rules (worksnap.json `patterns`), and the promoted
 * violation patterns. A promoted type that a detector or rule covers makes
 * that detector's findings errors; one that nothing covers reminds, on each
 * changed file it was reported on, of its prevention.
 */
export function runPatterns(files: readonly ScannedFile[], rules: readonly PatternRule[], promoted: readonly ViolationRecord[]): Finding[] {
  const escalated = new Set(promoted.map((v) => v.type));
  const out: Finding[] = [];
  const detectors: Detector[] = [
    ...DETECTORS,
    ...rules.map(
      (r): Detector => ({
        name: r.name,
        aliases: [r.name],
        severity: r.severity,
        scope: "added",
        appliesTo: (p) => r.files === undefined || new Bun.Glob(r.files).match(p),
        find: (text) => [...text.matchAll(new RegExp(r.regex.source, r.regex.flags))].map((m) => [lineAt(text, m.index ?? 0), r.message] as [number, string]),
      }),
    ),
  ];
  for (const f of files) {
    for (const d of detectors) {
      if (!d.appliesTo(f.path)) continue;
      const severity = d.aliases.some((a) => escalated.has(a)) ? "error" : d.severity;
      for (const [line, message] of d.find(f.text)) {
        if (d.scope === "added" && !f.added.has(line)) continue;
        out.push({ path: f.path, line, rule: d.name, severity, message });
      }
    }
  }
  const covered = new Set(detectors.flatMap((d) => d.aliases));
  for (const v of promoted) {
    if (covered.has(v.type)) continue;
    for (const f of files) {
      if (!v.files.includes(f.path)) continue;
      out.push({ path: f.path, line: 0, rule: v.type, severity: "warning", message: `pattern ${v.type} (reported ${v.count} times on this file and others)${v.prevention ? `: ${v.prevention}` : ""}` });
    }
  }
  return out;
}

/** Syntax of the changed files that worksnap can parse without project tools (TS/JS, JSON, JSONC, YAML, TOML). */
export function parseFindings(files: readonly ScannedFile[]): Finding[] {
  const out: Finding[] = [];
  for (const f of files) {
    const problem = parseProblem(f.path, f.text);
    if (problem) out.push({ path: f.path, line: problem.line, rule: "parse", severity: "error", message: problem.message });
  }
  return out;
}

const JSONC_NAMES = /(^|\/)(tsconfig[^/]*|jsconfig[^/]*|\.eslintrc|devcontainer|settings|extensions|launch|tasks)\.json$/;

function parseProblem(path: string, text: string): { line: number; message: string } | null {
  const lower = path.toLowerCase();
  try {
    if (languageOf(path) === "ts") {
      const r = scanTsImports(path, text);
      if (!r.parsed) {
        try {
          new Bun.Transpiler({ loader: lower.endsWith("x") ? "tsx" : "ts" }).transformSync(text);
        } catch (err) {
          const first = (err as { errors?: { message: string; position?: { line: number } }[] }).errors?.[0];
          return { line: first?.position?.line ?? 0, message: `does not parse: ${first?.message ?? String(err)}` };
        }
      }
      return null;
    }
    if (lower.endsWith(".json") && !JSONC_NAMES.test(path)) JSON.parse(text);
    else if (lower.endsWith(".json") || lower.endsWith(".jsonc")) Bun.JSONC.parse(text);
    else if (lower.endsWith(".yaml") || lower.endsWith(".yml")) Bun.YAML.parse(text);
    else if (lower.endsWith(".toml")) Bun.TOML.parse(text);
    return null;
  } catch (err) {
    const message = err instanceof Error ? err.message : String(err);
    // These parsers do not say where; the file is named without a line.
    return { line: 0, message: `does not parse: ${message.split("\n")[0]}` };
  }
}
