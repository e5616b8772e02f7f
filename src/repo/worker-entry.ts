import { COMPILED } from "../core/compiled";

/**
 * Where a worker's entry point is: inside the compiled binary an embedded
 * entry point named by its path relative to src/ (scripts/compile.ts lists
 * them: the hash workers, the grep index's build worker, the verified reads); run from source,
 * that file under src/.
 */
export function workerEntry(srcPath: string): string {
  return COMPILED ? `./${srcPath}` : new URL(`../${srcPath}`, import.meta.url).href;
}
