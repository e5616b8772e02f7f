/**
 * Whether this is the compiled executable (scripts/compile.ts defines WORKSNAP_BUILD) rather than the
 * source run by Bun (`bun src/main.ts`, tests). Decided by the define, not by `import.meta`, which the
 * executable's CommonJS bundle fixes at build time to the build machine's source paths.
 */
export const COMPILED: boolean = typeof WORKSNAP_BUILD === "object" && WORKSNAP_BUILD !== null;
