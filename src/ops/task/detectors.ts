/**
 * Built-in pattern detectors for `check` modes quick and patterns. Each looks
 * at the lines a task added (or, for conflict markers, at the whole file) of
 * the files changed since the task snapshot; each has a name, the violation
 * types it stands for (aliases, so `snap_violation {type:"silent_catch"}`
 * knows a detector covers it), a default severity and the files it applies to.
 * A secret's value is never repeated in a message.
 */
export type Severity = "error" | "warning";

export interface Finding {
  path: string;
  /** 1-based; 0 when the finding is about the whole file. */
  line: number;
  rule: string;
  severity: Severity;
  message: string;
}

export interface Detector {
  name: string;
  aliases: readonly string[];
  severity: Severity;
  /** "added": only matches on lines the task added count; "file": the whole file. */
  scope: "added" | "file";
  appliesTo: (path: string) => boolean;
  /** Matches as [1-based line, message]; `text` is the file's whole content. */
  find: (text: string) => [number, string][];
}

const ext = (p: string) => {
  const base = p.slice(p.lastIndexOf("/") + 1);
  const dot = base.lastIndexOf(".");
  return dot <= 0 ? "" : base.slice(dot + 1).toLowerCase();
};

const JS = new Set(["js", "jsx", "mjs", "cjs", "ts", "tsx", "mts", "cts"]);
const BRACE_CATCH = new Set([...JS, "java", "kt", "kts", "cs", "swift", "dart", "php", "scala", "cpp", "cc", "cxx", "hpp"]);
const isJs = (p: string) => JS.has(ext(p));
const isPy = (p: string) => ext(p) === "py";

/** 1-based line of a character offset. */
export function lineAt(text: string, offset: number): number {
  let n = 1;
  for (let i = text.indexOf("\n"); i >= 0 && i < offset; i = text.indexOf("\n", i + 1)) n++;
  return n;
}

function regexFinds(re: RegExp, message: string): (text: string) => [number, string][] {
  return (text) => {
    const out: [number, string][] = [];
    for (const m of text.matchAll(re)) out.push([lineAt(text, m.index ?? 0), message]);
    return out;
  };
}

function conflictMarkers(text: string): [number, string][] {
  const lines = text.split("\n");
  const out: [number, string][] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!(lines[i] as string).startsWith("<<<<<<< ") && lines[i] !== "<<<<<<<") continue;
    const sep = lines.findIndex((l, j) => j > i && /^=======\r?$/.test(l));
    const end = sep < 0 ? -1 : lines.findIndex((l, j) => j > sep && l.startsWith(">>>>>>>"));
    if (end >= 0) {
      out.push([i + 1, "merge conflict markers left in"]);
      i = end;
    }
  }
  return out;
}

/** Secret shapes: well-known token formats, and long literal values assigned to secret-sounding names. */
const SECRET_RULES: [RegExp, string][] = [
  [/\bAKIA[0-9A-Z]{16}\b/g, "an AWS access key id"],
  [/-----BEGIN (?:RSA |EC |DSA |OPENSSH |PGP |ENCRYPTED )?PRIVATE KEY(?: BLOCK)?-----/g, "a private key"],
  [/\bgh[pousr]_[A-Za-z0-9]{36,}\b/g, "a GitHub token"],
  [/\bgithub_pat_[A-Za-z0-9_]{40,}\b/g, "a GitHub token"],
  [/\bxox[abprs]-[A-Za-z0-9-]{10,}\b/g, "a Slack token"],
  [/\b[sr]k_live_[0-9A-Za-z]{20,}\b/g, "a Stripe live key"],
  [/\bAIza[0-9A-Za-z_-]{35}\b/g, "a Google API key"],
  [/\bsk-(?:proj-|ant-)?[A-Za-z0-9_-]{32,}\b/g, "an API secret key"],
  [
    /\b(?:api[_-]?key|secret(?:[_-]?key)?|passw(?:or)?d|access[_-]?token|auth[_-]?token|client[_-]?secret|private[_-]?key)\b["']?\s*[:=]\s*["']([^"'\s$`{}<>]{12,})["']/gi,
    "a literal secret assigned to a secret-sounding name",
  ],
];

function secrets(text: string): [number, string][] {
  const out: [number, string][] = [];
  for (const [re, what] of SECRET_RULES) {
    for (const m of text.matchAll(re)) {
      const value = m[1] ?? m[0];
      // Placeholders and references are not secrets.
      if (/^(x+|\*+|your[_-]?|example|changeme|placeholder|dummy|test|fake|redacted)/i.test(value)) continue;
      out.push([lineAt(text, m.index ?? 0), `looks like ${what} (value not shown)`]);
    }
  }
  return out;
}

export const DETECTORS: readonly Detector[] = [
  {
    name: "conflict_marker",
    aliases: ["conflict_marker", "conflict_markers", "merge_conflict", "conflict"],
    severity: "error",
    scope: "file",
    appliesTo: () => true,
    find: conflictMarkers,
  },
  {
    name: "focused_test",
    aliases: ["focused_test", "focused_tests", "only", "test_only", "fit", "fdescribe", "exclusive_test"],
    severity: "error",
    scope: "added",
    appliesTo: isJs,
    find: regexFinds(/\b(?:describe|it|test|context|suite)\.only\s*\(|\bf(?:it|describe)\s*\(/g, "focused test (.only/fit): other tests are skipped"),
  },
  {
    name: "secret",
    aliases: ["secret", "secrets", "hardcoded_secret", "leaked_secret", "credentials", "hardcoded_credentials", "api_key", "token_leak"],
    severity: "error",
    scope: "added",
    appliesTo: () => true,
    find: secrets,
  },
  {
    name: "empty_catch",
    aliases: ["empty_catch", "silent_catch", "swallowed_error", "swallowed_exception", "silent_failure", "ignored_error", "empty_except"],
    severity: "warning",
    scope: "added",
    appliesTo: (p) => BRACE_CATCH.has(ext(p)) || isPy(p) || ext(p) === "go",
    find: (text) => [
      ...regexFinds(/\bcatch\s*(?:\([^)]*\))?\s*\{\s*\}/g, "empty catch block swallows the error")(text),
      ...regexFinds(/^[ \t]*except\b[^:\n]*:[ \t]*(?:#[^\n]*)?\n[ \t]*pass\b/gm, "except: pass swallows the error")(text),
      ...regexFinds(/\bif\s+err\s*!=\s*nil\s*\{\s*\}/g, "empty if err != nil {} drops the error")(text),
    ],
  },
  {
    name: "debug_statement",
    aliases: ["debug_statement", "debug_statements", "console_log", "debugger", "leftover_debug", "debug_code", "print_debug"],
    severity: "warning",
    scope: "added",
    appliesTo: (p) => isJs(p) || isPy(p) || ["rs", "rb"].includes(ext(p)),
    find: (text) => [
      ...regexFinds(/\bconsole\.(?:log|debug|trace)\s*\(|^[ \t]*debugger\b/gm, "left-over console logging or debugger statement")(text),
      ...regexFinds(/\bbreakpoint\(\)|\b(?:i?pdb)\.set_trace\(/g, "left-over breakpoint()/pdb.set_trace")(text),
      ...regexFinds(/\bdbg!\(|\bbinding\.(?:pry|irb)\b/g, "left-over dbg!/binding.pry")(text),
    ],
  },
];

/** The built-in detector a violation type stands for, if any. */
export function detectorFor(type: string): Detector | undefined {
  return DETECTORS.find((d) => d.aliases.includes(type));
}
