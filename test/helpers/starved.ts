import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * Runs `body` (TypeScript, after `imports`) in a Bun process that has no file
 * descriptor free: `ulimit -n 64`, then /dev/null opened until EMFILE. The
 * shortage is real; nothing stands in for the file system. The script is
 * written into `dir`. Returns what the process printed.
 */
export function runStarved(dir: string, imports: string, body: string): { stdout: string; stderr: string } {
  const file = join(dir, `starved-${process.pid}-${Math.random().toString(36).slice(2)}.ts`);
  writeFileSync(
    file,
    `${imports}
import { openSync as __open } from "node:fs";
const __held: number[] = [];
try { for (;;) __held.push(__open("/dev/null", "r")); } catch (e) { if ((e as NodeJS.ErrnoException).code !== "EMFILE") throw e; }
${body}
`,
  );
  const r = Bun.spawnSync(["bash", "-c", 'ulimit -n 64 && exec "$0" "$1"', process.execPath, file], { stdout: "pipe", stderr: "pipe" });
  return { stdout: r.stdout.toString(), stderr: r.stderr.toString() };
}

/** An import line for a module of src/, from a test file's directory. */
export function srcImport(names: string, fromTestDir: string, srcPath: string): string {
  return `import { ${names} } from ${JSON.stringify(join(fromTestDir, srcPath))};`;
}
