declare module "*.txt" {
  const text: string;
  export default text;
}

/** Defined by scripts/compile.ts for a compiled executable; undeclared (typeof "undefined") when run from source. */
declare const WORKSNAP_BUILD: import("./version").BuildInfo | undefined;
