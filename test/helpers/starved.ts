import { writeFileSync } from "node:fs";
import { join } from "node:path";

/**
 * In a Bun process that has no file descriptor free (`ulimit -n 64`, then
 * /dev/null opened until EMFILE: the shortage is real, nothing stands in for
 * the file system), runs `setup`, then each of `calls` (expressions, awaited)
 * and returns what became of each: the code of what it threw ("?" without
 * one), or "ok". `imports` are [names, module path relative to the test's
 * directory `fromDir`]. The script is written into `dir`.
 */
export function starvedOutcomes(dir: string, fromDir: string, imports: [string, string][], setup: string, calls: string[]): { outcomes: string[]; stderr: string } {
  const file = join(dir, `starved-${process.pid}-${Math.random().toString(36).slice(2)}.ts`);
  const lines = imports.map(([names, path]) => `import { ${names} } from ${JSON.stringify(join(fromDir, path))};`);
  writeFileSync(
    file,
    `${lines.join("\n")}
import { openSync as __open } from "node:fs";
${setup}
const __held: number[] = [];
try { for (;;) __held.push(__open("/dev/null", "r")); } catch (e) { if ((e as NodeJS.ErrnoException).code !== "EMFILE") throw e; }
const __out: string[] = [];
for (const __call of [${calls.map((c) => `async () => ${c}`).join(", ")}]) {
  try { await __call(); __out.push("ok"); } catch (e) { __out.push((e as { code?: string }).code ?? "?"); }
}
console.log(JSON.stringify(__out));
`,
  );
  const r = Bun.spawnSync(["bash", "-c", 'ulimit -n 64 && exec "$0" "$1"', process.execPath, file], { stdout: "pipe", stderr: "pipe" });
  const stdout = r.stdout.toString().trim();
  return { outcomes: stdout === "" ? [] : (JSON.parse(stdout) as string[]), stderr: r.stderr.toString() };
}
