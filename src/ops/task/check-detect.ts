import { existsSync } from "node:fs";
import { join } from "node:path";
import type { Workspace } from "../workspace";
import { type CheckKind, CONFIG_FILE, type PatternRule, parseWorksnapConfig } from "./check-config";
import { type ConfigOrigin, readCommitted } from "./committed-files";

/**
 * Which commands `check` runs, from the repository and never from tool
 * arguments: worksnap.json's `checks` when present (exactly those), else
 * what the project uses, detected per kind in this order:
 *
 * - package.json scripts: typecheck (or type-check, check-types, tsc), lint,
 *   build, test (npm's placeholder test script does not count). The script
 *   text is run with `sh -c`, with node_modules/.bin on PATH, as npm would,
 *   but from the committed package.json (npm would read the work tree's).
 * - Makefile targets (Makefile, makefile or GNUmakefile): typecheck, lint,
 *   build, test (or check). Run as `make -f - TARGET` with the committed
 *   makefile on standard input, so an edited recipe is not what runs.
 * - TypeScript: tsconfig.json and the project's own node_modules/typescript:
 *   `tsc --noEmit -p tsconfig.json` (typecheck).
 * - Cargo.toml: cargo check / clippy (when installed) / build / test.
 * - go.mod: go vet (lint), go build ./... (build), go test ./... (test).
 * - Python, where configured: ruff check (ruff.toml, .ruff.toml or
 *   [tool.ruff]), mypy (mypy.ini, [tool.mypy], setup.cfg [mypy]), pytest
 *   (pytest.ini, [tool.pytest.ini_options], tox.ini [pytest], setup.cfg
 *   [tool:pytest]).
 * A kind found earlier in the list is not detected again later, except that
 * ecosystems (TypeScript, Cargo, Go, Python) all contribute when several are
 * present and nothing earlier covered the kind.
 *
 * Every command runs with the work tree as its directory and
 * node_modules/.bin, .venv/bin and venv/bin (when present) ahead on PATH.
 */
export interface CheckCommand {
  /** Unique in the plan: the kind, or kind:tool when a kind has several commands. */
  name: string;
  kind: CheckKind;
  argv: string[];
  /** What answers show: the command as a person would type it. */
  display: string;
  /** Where it came from: "worksnap.json", "package.json scripts.test", "Makefile target test", ... */
  source: string;
  timeoutMs: number;
  /** Standard input (a committed makefile for `make -f -`). */
  stdin?: string;
}

export interface CheckPlan {
  origin: ConfigOrigin;
  /** true: worksnap.json's checks section decided the commands. */
  explicit: boolean;
  commands: CheckCommand[];
  patterns: PatternRule[];
  /** Configuration files whose work-tree version differs from the one read (not used). */
  drift: string[];
  /** Why something the project seems to use was not detected (a tool not installed). */
  notes: string[];
  /** Directories put ahead on PATH for every command. */
  pathDirs: string[];
}

export const DEFAULT_TIMEOUT_MS: Record<CheckKind, number> = { typecheck: 300_000, lint: 300_000, build: 600_000, test: 600_000 };

const MAKEFILES = ["GNUmakefile", "makefile", "Makefile"];
const PY_FILES = ["pyproject.toml", "setup.cfg", "tox.ini", "pytest.ini", "mypy.ini", "ruff.toml", ".ruff.toml"];
/** Every configuration file the plan may read. */
export const CONFIG_FILES = [CONFIG_FILE, "package.json", ...MAKEFILES, "tsconfig.json", "Cargo.toml", "go.mod", ...PY_FILES];

const SCRIPT_NAMES: Record<CheckKind, string[]> = {
  typecheck: ["typecheck", "type-check", "check-types", "tsc"],
  lint: ["lint"],
  build: ["build"],
  test: ["test"],
};
const MAKE_TARGETS: Record<CheckKind, string[]> = { typecheck: ["typecheck", "type-check"], lint: ["lint"], build: ["build"], test: ["test", "check"] };
const NPM_PLACEHOLDER_TEST = /no test specified/;

/** `head`: the HEAD commit when the caller read the git state already. */
export async function loadCheckPlan(ws: Workspace, head?: string): Promise<CheckPlan> {
  const read = await readCommitted(ws, CONFIG_FILES, head);
  const files = read.files;
  const config = parseWorksnapConfig(files.get(CONFIG_FILE));
  const pathDirs = ["node_modules/.bin", ".venv/bin", "venv/bin"].map((d) => join(ws.repo.root, d)).filter((d) => existsSync(d));
  const plan: CheckPlan = { origin: read.origin, explicit: config.checks !== null, commands: [], patterns: config.patterns, drift: read.drift, notes: [], pathDirs };
  if (config.checks) {
    // Cheap kinds first, whatever order the file lists them in: a type error is found before the tests run.
    const order = (k: CheckKind) => (["typecheck", "lint", "build", "test"] as const).indexOf(k);
    for (const c of [...config.checks].sort((a, b) => order(a.kind) - order(b.kind))) {
      plan.commands.push({ name: c.kind, kind: c.kind, argv: c.argv, display: c.display, source: CONFIG_FILE, timeoutMs: c.timeoutMs ?? DEFAULT_TIMEOUT_MS[c.kind] });
    }
    return named(plan);
  }
  const found = new Map<CheckKind, CheckCommand[]>();
  const add = (c: Omit<CheckCommand, "name" | "timeoutMs">) => found.set(c.kind, [...(found.get(c.kind) ?? []), { ...c, name: c.kind, timeoutMs: DEFAULT_TIMEOUT_MS[c.kind] }]);
  const covered = new Set<CheckKind>();
  const layer = (fn: () => void) => {
    fn();
    for (const k of found.keys()) covered.add(k);
  };
  layer(() => fromPackageJson(files.get("package.json"), add, plan.notes));
  layer(() => fromMakefile(files, add, covered));
  const which = (tool: string) => Bun.which(tool, { PATH: [...pathDirs, process.env.PATH ?? ""].join(":") });
  const eco = (c: Omit<CheckCommand, "name" | "timeoutMs">) => {
    if (!covered.has(c.kind)) add(c);
  };
  if (files.has("tsconfig.json")) {
    const tsc = join(ws.repo.root, "node_modules", "typescript", "bin", "tsc");
    if (existsSync(tsc)) eco({ kind: "typecheck", argv: [tsc, "--noEmit", "--pretty", "false", "-p", "tsconfig.json"], display: "tsc --noEmit -p tsconfig.json", source: "tsconfig.json with node_modules/typescript" });
    else if (!covered.has("typecheck")) plan.notes.push("tsconfig.json is committed but node_modules/typescript is not installed: no typecheck");
  }
  if (files.has("Cargo.toml")) {
    if (which("cargo")) {
      eco({ kind: "typecheck", argv: ["cargo", "check", "--message-format", "short"], display: "cargo check", source: "Cargo.toml" });
      if (which("cargo-clippy")) eco({ kind: "lint", argv: ["cargo", "clippy", "--message-format", "short"], display: "cargo clippy", source: "Cargo.toml" });
      eco({ kind: "build", argv: ["cargo", "build", "--message-format", "short"], display: "cargo build", source: "Cargo.toml" });
      eco({ kind: "test", argv: ["cargo", "test"], display: "cargo test", source: "Cargo.toml" });
    } else plan.notes.push("Cargo.toml is committed but cargo is not on PATH");
  }
  if (files.has("go.mod")) {
    if (which("go")) {
      eco({ kind: "lint", argv: ["go", "vet", "./..."], display: "go vet ./...", source: "go.mod" });
      eco({ kind: "build", argv: ["go", "build", "./..."], display: "go build ./...", source: "go.mod" });
      eco({ kind: "test", argv: ["go", "test", "./..."], display: "go test ./...", source: "go.mod" });
    } else plan.notes.push("go.mod is committed but go is not on PATH");
  }
  fromPython(files, eco, which, plan.notes);
  for (const kind of ["typecheck", "lint", "build", "test"] as const) plan.commands.push(...(found.get(kind) ?? []));
  return named(plan);
}

/** Names: the kind, or kind:tool when a kind has several commands. */
function named(plan: CheckPlan): CheckPlan {
  const counts = new Map<string, number>();
  for (const c of plan.commands) counts.set(c.kind, (counts.get(c.kind) ?? 0) + 1);
  const seen = new Set<string>();
  for (const c of plan.commands) {
    if ((counts.get(c.kind) ?? 0) <= 1) continue;
    let name = `${c.kind}:${toolName(c)}`;
    for (let i = 2; seen.has(name); i++) name = `${c.kind}:${toolName(c)}${i}`;
    seen.add(name);
    c.name = name;
  }
  return plan;
}

function toolName(c: CheckCommand): string {
  const first = c.argv[0] === "sh" && c.argv[1] === "-c" ? (c.argv[2] ?? "").trim().split(/\s+/)[0] ?? "" : (c.argv[0] ?? "");
  return (first.slice(first.lastIndexOf("/") + 1) || "cmd").replace(/[^A-Za-z0-9_.-]/g, "");
}

type Add = (c: Omit<CheckCommand, "name" | "timeoutMs">) => void;

function fromPackageJson(text: string | undefined, add: Add, notes: string[]): void {
  if (text === undefined) return;
  let scripts: Record<string, unknown>;
  try {
    scripts = (JSON.parse(text) as { scripts?: Record<string, unknown> }).scripts ?? {};
  } catch {
    notes.push("package.json does not parse: its scripts were not used");
    return;
  }
  for (const kind of ["typecheck", "lint", "build", "test"] as const) {
    const name = SCRIPT_NAMES[kind].find((n) => typeof scripts[n] === "string" && (scripts[n] as string).trim() !== "");
    if (name === undefined) continue;
    const script = (scripts[name] as string).trim();
    if (kind === "test" && NPM_PLACEHOLDER_TEST.test(script)) continue;
    add({ kind, argv: ["sh", "-c", script], display: script, source: `package.json scripts.${name}` });
  }
}

function fromMakefile(files: Map<string, string>, add: Add, covered: Set<CheckKind>): void {
  const name = MAKEFILES.find((m) => files.has(m));
  if (name === undefined) return;
  const text = files.get(name) as string;
  const targets = new Set([...text.matchAll(/^([A-Za-z0-9][A-Za-z0-9_.-]*)[ \t]*:(?![=:])/gm)].map((m) => m[1] as string));
  for (const kind of ["typecheck", "lint", "build", "test"] as const) {
    if (covered.has(kind)) continue;
    const target = MAKE_TARGETS[kind].find((t) => targets.has(t));
    if (target !== undefined) add({ kind, argv: ["make", "-f", "-", target], display: `make ${target}`, source: `${name} target ${target}`, stdin: text });
  }
}

function fromPython(files: Map<string, string>, eco: Add, which: (tool: string) => string | null, notes: string[]): void {
  const pyproject = files.get("pyproject.toml") ?? "";
  const setupCfg = files.get("setup.cfg") ?? "";
  const has = (tool: string, configured: boolean, c: Omit<CheckCommand, "name" | "timeoutMs">) => {
    if (!configured) return;
    if (which(tool)) eco(c);
    else notes.push(`${tool} is configured but not installed (not on PATH, .venv/bin or venv/bin)`);
  };
  has("ruff", /^\[tool\.ruff[\].]/m.test(pyproject) || files.has("ruff.toml") || files.has(".ruff.toml"), {
    kind: "lint", argv: ["ruff", "check", "--output-format", "concise", "."], display: "ruff check .", source: "ruff configuration",
  });
  has("mypy", /^\[tool\.mypy\]/m.test(pyproject) || files.has("mypy.ini") || /^\[mypy\]/m.test(setupCfg), {
    kind: "typecheck", argv: ["mypy", "."], display: "mypy .", source: "mypy configuration",
  });
  has(
    "pytest",
    /^\[tool\.pytest\.ini_options\]/m.test(pyproject) || files.has("pytest.ini") || /^\[pytest\]/m.test(files.get("tox.ini") ?? "") || /^\[tool:pytest\]/m.test(setupCfg),
    { kind: "test", argv: ["pytest", "-q"], display: "pytest -q", source: "pytest configuration" },
  );
}
