import { AREAS } from "./risk";
import { CHECK_KINDS } from "./check-config";
import { DETECTORS } from "./detectors";
import { AUTOMATE_AT, PROMOTE_AT } from "./memory-store";
import { WIRE_ERROR_CODES } from "./task-errors";

/**
 * snap_help: the plain-text reference (no wire line: it is the way out when
 * the wire format is unclear). Every TYPE's fields are documented in order,
 * with the escaping rules, the modes, the thresholds and the tools.
 */
export const HELP_TOPICS = ["wire", "modes", "thresholds", "tools", "all"] as const;
export type HelpTopic = (typeof HELP_TOPICS)[number];

const WIRE = `# worksnap task wire format (spec 003)

Every answer of snap, check, snap_end, snap_learn, snap_violation and snap_fix is:
  line 1: 🧢|TYPE|field|field|...
  line 2: ---
  then:   a plain-language summary with everything essential. If the line is unclear, read the summary.

Fields are labeled (label:value) by default, and positional (value only, same order) with compact:true.
Some fields are positional in both modes; they come after the labeled ones (noted below).

TYPE CODES:
  S = task started (snap mode start)      C = check result (check, snap mode check)
  X = current context (snap mode context) E = task ended (snap_end)
  R = snapshot list or restore (snap_fix)  D = diff of snapshots (snap_fix action diff)
  L = learning captured (snap_learn)       V = violation recorded (snap_violation)
  ! = error (any tool)                     H = this help (plain text, never a wire line)

FIELD DECODE (in order):
  S: id | snap | risk | prot | dirty | status | learn
     id      task id (task_<n>), pass it as taskId to check and snap_end
     snap    snapshot id prefix (12+ hex); any snapshot tool and snap_fix accept it; "-" when the capture failed
     risk    L, M or H (snap_help topic thresholds has the rules)
     prot    % of the named files the snapshot holds (100 when no file is named); 0 when the capture failed
     dirty   files changed before the task (git status; outside git: against the previous task snapshot)
     status  created (new snapshot), reused (the same files were captured before), failed (no snapshot)
     learn   matching learnings and patterns, ";"-separated (pattern:<type> for a promoted violation); "-" for none
  C: status | err | warn | ts | lint | tests | issues
     status  ✓ pass, ✗ fail, ⏭️ skipped (nothing to run)
     err     errors, as <n>E          warn  warnings, as <n>W
     ts      typecheck/build commands: ✓ ✗ ⏭️ (⏭️ = none ran)
     lint    lint commands: ✓ ✗ ⏭️    tests  test commands: ✓ ✗ ⏭️
     issues  the first problems as file:line, ","-separated, errors first (mode impact: the dependent files)
  X: risk | prot | dirty | learn   (as in S; dirty = files changed now)
  E: status | learn | files | lines | summary | <survey JSON, positional>
     status  OK (outcome completed) or ERR (abandoned, blocked)
     learn   learnings stored, as <n>L      files  files changed since the task started, as <n>F
     lines   +added-removed lines since the start (as git diff --numstat counts them; binary files count 0)
     summary the task title               survey  the survey as given, JSON ({} when none)
  R (list):    count | <snap>:<age>:<files>f ... (positional entries, newest first; age as 40s, 5m, 3h, 2d)
  R (restore): status | files | <file> ... (positional file names)
     status  OK (restored) or DRYRUN (nothing written)     files  files changed (or that would change)
  D: from | to | added | removed | changed
     from/to snapshot prefixes, or worktree     added +<n> files, removed -<n> files, changed ~<n> files
  L: status | id | type          (id learn_<hex>; type pattern, pitfall, efficiency, discovery, workflow)
  V: status | type | count | promote | auto
     promote NO (under ${PROMOTE_AT}), PROMOTED (this report made it a pattern), PATTERN (a pattern already)
     auto    YES from ${AUTOMATE_AT} occurrences (marked for automation), else NO
  !: code | reason

ESCAPING (a field never breaks the line):
  → is a space: whitespace runs (spaces, tabs, newlines) become one →.
  \\| is a literal |, \\\\ a backslash, \\→ a literal →, \\… a literal …, \\- a literal "-".
  A value ending in an unescaped … was cut (long values are shortened; the summary has more).
  "-" alone is an empty value. A positional field …+N means N more entries were not listed.
  Labels never contain ":"; a labeled field splits at its first ":" (values may hold ":", as file:line).

ERROR CODES:
${Object.entries(WIRE_ERROR_CODES)
  .map(([code, what]) => `  ${code.padEnd(24)} ${what}`)
  .join("\n")}
`;

const MODES = `# Modes

snap {mode}:
  start    begin a task: snapshot of the task's files plus every dirty file, risk, learnings (needs task)
  check    check mode full on the current task (answers C)
  context  the current task against its start: files changed, risk now, dirty files, learnings (answers X)

check {mode} (taskId omitted = the current task; files = check those files instead of the task's changes):
  quick     fast sanity, no project tools: changed files parse (TS/JS, JSON, YAML, TOML), no conflict markers,
            no pattern hit
  patterns  the pattern detectors over the lines the task added: ${DETECTORS.map((d) => d.name).join(", ")},
            worksnap.json patterns, promoted violations
  full      quick + the project's ${CHECK_KINDS.join(", ")} commands
  build     the project's build commands (the typecheck when there is no build command)
  test      the project's test commands
  impact    files that import the changed ones (transitively, capped at 200) and the tests among them
  circular  import cycles through the changed files (new cycles are errors, older ones warnings)
  docs      documentation naming a changed file or exported symbol that the task did not update
  all       everything above

Project commands come from the committed worksnap.json "checks" (else detected from committed package.json
scripts, Makefile targets, tsconfig.json + node_modules/typescript, Cargo.toml, go.mod, Python tool
configuration), never from arguments. A result is cached per (tree snapshot, command): the same tree answers
at once ("from the cache"). Timeouts stop the command's whole process group (CHECK_TIMEOUT).

snap_fix {action}:
  list     task snapshots, newest first
  diff     id vs the work tree (a task snapshot: what changed since the task started), or id vs diffWith
  restore  put the work tree back to snapshot id (a task snapshot: the task's whole starting tree);
           dryRun:true lists what would change and writes nothing; recorded in the edit history
           (worksnap history reject --conv <id> takes it back)
`;

const THRESHOLDS = `# Thresholds

Violations (snap_violation), counted per type:
  1-${PROMOTE_AT - 1}   stored for reference (promote:NO)
  ${PROMOTE_AT}     promoted to a pattern (promote:PROMOTED): task starts that match it show it in learn, check patterns
        applies it (a detector covering it then reports errors)
  ${AUTOMATE_AT}+    marked for automation (auto:YES): covered by a built-in detector, or add a worksnap.json pattern

Risk (snap start, snap context), from a score:
  +2 per sensitive area touched (a file path, the title or keywords): ${AREAS.map((a) => a.name).join(", ")}
  +1 for 5-14 files, +2 for 15 or more
  +1 for 1-9 dirty files, +2 for 10 or more
  L = 0-1, M = 2-3, H = 4 or more

Protection (prot): share of the named files the snapshot holds (a named file that does not exist yet is not held).
`;

const TOOLS = `# Tools

snap {mode: start|check|context, task?, files?, keywords?, compact?}
  start needs task (title or goal); files are the task's primary files; keywords help match learnings.
check {mode, taskId?, files?, compact?}
snap_end {taskId, outcome?: completed|abandoned|blocked, learnings?: string[], survey?: {patterns_used,
  pitfalls_avoided, helpfulness (1-5), unhelpful_count}, compact?}
snap_learn {trigger, action, type: pattern|pitfall|efficiency|discovery|workflow}
snap_violation {type, description, file?, prevention?, taskId?}
snap_fix {action?: list|restore|diff (default list), id?, diffWith?, dryRun?}
snap_help {topic: wire|modes|thresholds|tools|all}

Learnings and violations persist in .mcp/memory/ (this clone only). A team shares learnings by committing
.worksnap/learnings.jsonl (same line format as .mcp/memory/learnings.jsonl), read from HEAD.
`;

export function helpText(topic: HelpTopic): string {
  switch (topic) {
    case "wire":
      return WIRE;
    case "modes":
      return MODES;
    case "thresholds":
      return THRESHOLDS;
    case "tools":
      return TOOLS;
    case "all":
      return [WIRE, MODES, THRESHOLDS, TOOLS].join("\n");
  }
}
