/**
 * The page's files, embedded in the binary: the HTML, the stylesheet, the
 * icon, and the script (src/web/page/*.ts, bundled for the browser by
 * build.ts into build/web/review-page.js). Nothing is fetched from anywhere
 * else.
 */
import script from "../../build/web/review-page.js" with { type: "text" };
import favicon from "./page/favicon.svg" with { type: "text" };
import page from "./page/index.html" with { type: "text" };
import css from "./page/style.css" with { type: "text" };

// Bun's types give an .html import the type of an HTML bundle; imported as text it is the file's text.
const html = page as unknown as string;

export const PAGE_ASSETS: Record<string, { body: string; type: string }> = {
  "/": { body: html, type: "text/html; charset=utf-8" },
  "/app.js": { body: script, type: "text/javascript; charset=utf-8" },
  "/app.css": { body: css, type: "text/css; charset=utf-8" },
  "/favicon.svg": { body: favicon, type: "image/svg+xml" },
};
