import type { Severity } from "./detectors";

/**
 * Reads diagnostics out of check output, whatever the tool: every line is
 * tried against the shapes the common tools print, and a location counts
 * only when it names a file of the work tree (paths are made repo-relative;
 * anything else, such as a URL or a node_modules frame, is not a location).
 *
 * - tsc: `file(line,col): error TS2322: ...` and the pretty `file:line:col - error TS...`;
 *   summary `Found N errors`.
 * - eslint: stylish (a file line, then `  line:col  error  message  rule`); summary
 *   `✖ N problems (E errors, W warnings)`; the compact/unix forms are the generic one.
 * - cargo/rustc: `error[E0308]: ...` then ` --> file:line:col`; `--message-format short`
 *   lines; test panics `panicked at file:line:col`; summary `test result: FAILED. P passed; F failed`.
 * - go: `file.go:line:col: message` (build, vet) and `    file_test.go:line: message` (test);
 *   `--- FAIL: TestName`.
 * - pytest: `FAILED path::test - reason`, `ERROR path`, traceback `path:line: Error`; summary
 *   `N failed, M passed`.
 * - bun test / jest / vitest: `(fail) name`, `● name`, `FAIL file`, stack frames
 *   `at ... (file:line:col)`, `❯ file:line:col`; summaries ` N fail`, `Tests: N failed`.
 * - generic: `file:line:col: [error|warning:] message` and `file:line: [error|warning:] message`
 *   (gcc, clang, mypy, ruff, shellcheck -f gcc, ...).
 */
export interface Diagnostic {
  path: string;
  line: number;
  col?: number;
  severity: Severity;
  message: string;
}

export interface ParsedOutput {
  diagnostics: Diagnostic[];
  /** Counts a tool printed in its summary line, when it printed one. */
  summaryErrors?: number;
  summaryWarnings?: number;
  failedTests: number;
}

export interface PathResolver {
  /** A repo-relative path for a path as printed (relative to the root, absolute, or `./`), or null when it is not a work-tree file. */
  (printed: string): string | null;
}

const MAX_DIAGNOSTICS = 200;
// A stack frame or a `-->` / `❯` pointer: the location of what came before it.
const FRAME = /(?:\bat\b.*?\(|\bat\s+|❯\s+|-->\s+|panicked at\s+)((?:file:\/\/)?[^\s()'"]+?):(\d+):(\d+)\)?:?\s*$/;
const TSC_PAREN = /^(.+?)\((\d+),(\d+)\):\s+(error|warning)\s+(TS\d+):\s*(.*)$/;
const TSC_PRETTY = /^(.+?):(\d+):(\d+)\s+-\s+(error|warning)\s+(TS\d+):\s*(.*)$/;
const ESLINT_ROW = /^\s+(\d+):(\d+)\s+(error|warning)\s+(.+?)(?:\s{2,}(\S+))?\s*$/;
const RUST_HEAD = /^(error|warning)(\[\w+\])?:\s+(.*)$/;
const GO_TEST = /^\s+([^\s:]+_test\.go):(\d+):\s+(.*)$/;
const PYTEST_FAILED = /^(FAILED|ERROR)\s+([^\s:]+?\.py)(?:::(\S+))?(?:\s+-\s+(.*))?$/;
const PY_TRACE = /^([^\s:]+?\.py):(\d+):\s+(\w*(?:Error|Exception|Failed)\w*)$/;
const GENERIC_COL = /^(.+?):(\d+):(\d+):\s*(?:(fatal error|error|warning|note)(?:\[([^\]]*)\])?:?\s*)?(.*)$/;
const GENERIC_LINE = /^(.+?):(\d+):\s*(?:(fatal error|error|warning|note)(?:\[([^\]]*)\])?:?\s*)?(.*)$/;
const TEST_FAIL = /^\s*(?:\(fail\)|✗|×|●)\s+(.+?)(?:\s+\[[\d.]+m?s\])?$|^\s*--- FAIL: (\S+)|^---- (\S+) stdout ----$|^\s*FAIL\s+(\S+ > .+)$/;
/** A failed test's name can follow its location (bun test prints the error and frame first): this many lines apart at most. */
const NAME_AFTER_FRAME_LINES = 40;

function severityOf(word: string | undefined): Severity | null {
  if (!word || word === "error" || word === "fatal error") return "error";
  if (word === "warning") return "warning";
  return null; // a note
}

export function parseOutput(output: string, resolve: PathResolver): ParsedOutput {
  const out: ParsedOutput = { diagnostics: [], failedTests: 0 };
  const seen = new Set<string>();
  const push = (d: Diagnostic) => {
    const key = `${d.path}:${d.line}:${d.col ?? ""}:${d.severity}:${d.message}`;
    if (seen.has(key) || out.diagnostics.length >= MAX_DIAGNOSTICS) return;
    seen.add(key);
    out.diagnostics.push(d);
  };
  let eslintFile: string | null = null;
  /** The last diagnostic placed by a stack frame, not yet given a test name. */
  let lastFrame: { diagnostic: Diagnostic; line: number } | null = null;
  /** A headline waiting for its location (rustc `error: ...` then `-->`, a failed test then its frame). */
  let pending: { severity: Severity; message: string; ttl: number } | null = null;
  const lines = output.split(/\r?\n/);
  for (let n = 0; n < lines.length; n++) {
    const line = stripAnsi(lines[n] as string);
    if (pending && --pending.ttl < 0) pending = null;
    summaries(line, out);
    const fail = TEST_FAIL.exec(line);
    if (fail) {
      out.failedTests++;
      const name = `test failed: ${(fail[1] ?? fail[2] ?? fail[3] ?? fail[4] ?? "").trim()}`;
      if (lastFrame && n - lastFrame.line <= NAME_AFTER_FRAME_LINES) {
        lastFrame.diagnostic.message = `${name}: ${lastFrame.diagnostic.message}`;
        lastFrame = null;
      } else pending = { severity: "error", message: name, ttl: 40 };
      continue;
    }
    let m = TSC_PAREN.exec(line) ?? TSC_PRETTY.exec(line);
    if (m) {
      const path = resolve(m[1] as string);
      if (path) push({ path, line: Number(m[2]), col: Number(m[3]), severity: m[4] === "warning" ? "warning" : "error", message: `${m[5]}: ${m[6]}` });
      continue;
    }
    const frame = FRAME.exec(line);
    if (frame) {
      const path = resolve(frame[1] as string);
      if (path && pending) {
        const d: Diagnostic = { path, line: Number(frame[2]), col: Number(frame[3]), severity: pending.severity, message: pending.message };
        push(d);
        lastFrame = pending.message.startsWith("test failed: ") ? null : { diagnostic: d, line: n };
        pending = null;
      }
      continue;
    }
    m = RUST_HEAD.exec(line);
    if (m && !/^(error|warning): (could not compile|aborting|build failed|\d+ warnings? emitted)/.test(line)) {
      pending = { severity: m[1] === "warning" ? "warning" : "error", message: `${m[2] ? `${m[2].slice(1, -1)}: ` : ""}${m[3]}`, ttl: 6 };
      continue;
    }
    m = ESLINT_ROW.exec(line);
    if (m && eslintFile) {
      push({ path: eslintFile, line: Number(m[1]), col: Number(m[2]), severity: m[3] === "warning" ? "warning" : "error", message: m[5] ? `${m[5]}: ${m[4]}` : (m[4] as string) });
      continue;
    }
    m = PYTEST_FAILED.exec(line);
    if (m) {
      const path = resolve(m[2] as string);
      if (path) push({ path, line: 0, severity: "error", message: `${m[1] === "FAILED" ? "test failed" : "error"}: ${m[3] ?? path}${m[4] ? ` - ${m[4]}` : ""}` });
      if (m[1] === "FAILED") out.failedTests++;
      continue;
    }
    m = PY_TRACE.exec(line) ?? null;
    if (m) {
      const path = resolve(m[1] as string);
      if (path) push({ path, line: Number(m[2]), severity: "error", message: m[3] as string });
      continue;
    }
    m = GO_TEST.exec(line);
    if (m) {
      const path = resolve(m[1] as string);
      if (path) push({ path, line: Number(m[2]), severity: "error", message: (m[3] as string).trim() });
      continue;
    }
    m = GENERIC_COL.exec(line);
    const g = m ? { file: m[1], line: m[2], col: m[3], sev: m[4], code: m[5], msg: m[6] } : (() => {
      const l = GENERIC_LINE.exec(line);
      return l ? { file: l[1], line: l[2], col: undefined, sev: l[3], code: l[4], msg: l[5] } : null;
    })();
    if (g) {
      const path = resolve((g.file as string).trim());
      const severity = severityOf(g.sev);
      if (path && severity) {
        const message = (g.msg ?? "").trim();
        push({ path, line: Number(g.line), col: g.col === undefined ? undefined : Number(g.col), severity, message: g.code ? `${g.code}: ${message}` : message });
        continue;
      }
    }
    // eslint's stylish format: a line that is just a file path starts that file's rows.
    const asFile = line.trim() !== "" && !line.startsWith(" ") ? resolve(line.trim()) : null;
    if (asFile) eslintFile = asFile;
    else if (line.trim() === "") eslintFile = null;
  }
  return out;
}

function summaries(line: string, out: ParsedOutput): void {
  let m = /^Found (\d+) errors?\b/.exec(line);
  if (m) out.summaryErrors = Number(m[1]);
  m = /✖ \d+ problems? \((\d+) errors?, (\d+) warnings?\)/.exec(line);
  if (m) {
    out.summaryErrors = Number(m[1]);
    out.summaryWarnings = Number(m[2]);
  }
  m = /^test result: FAILED\. \d+ passed; (\d+) failed/.exec(line);
  if (m) out.summaryErrors = (out.summaryErrors ?? 0) + Number(m[1]);
  m = /^=+ (.*\b(?:failed|passed|errors?)\b.*) in [\d.]+s/.exec(line) ?? /^(\d+ (?:failed|passed|errors?)\b.*) in [\d.]+s\b/.exec(line);
  if (m) {
    const failed = /(\d+) failed/.exec(m[1] as string);
    const errors = /(\d+) errors?/.exec(m[1] as string);
    out.summaryErrors = Number(failed?.[1] ?? 0) + Number(errors?.[1] ?? 0);
  }
  m = /^\s*(\d+) fail$/.exec(line) ?? /^Tests:\s+(\d+) failed/.exec(line) ?? /^\s*Tests\s+(\d+) failed/.exec(line);
  if (m) out.summaryErrors = Number(m[1]);
  m = /warning: `[^`]+` \([^)]*\) generated (\d+) warnings?/.exec(line);
  if (m) out.summaryWarnings = (out.summaryWarnings ?? 0) + Number(m[1]);
}

const ANSI = /\x1b\[[0-9;?]*[A-Za-z]/g;

function stripAnsi(s: string): string {
  return s.includes("\x1b") ? s.replace(ANSI, "") : s;
}
