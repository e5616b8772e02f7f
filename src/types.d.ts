declare module "*.txt" {
  const text: string;
  export default text;
}

declare module "*.css" {
  const text: string;
  export default text;
}

declare module "*.svg" {
  const text: string;
  export default text;
}

/** The review page's script, bundled by build.ts (scripts/build-page.ts) and imported as text. */
declare module "*/review-page.js" {
  const text: string;
  export default text;
}

/** Defined by scripts/compile.ts for a compiled executable; undeclared (typeof "undefined") when run from source. */
declare const WORKSNAP_BUILD: import("./version").BuildInfo | undefined;
