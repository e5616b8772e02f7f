// Compiles src/main.ts into the single executable dist/worksnap for this machine, with the native module
// (src/native/*.c) embedded when a C compiler is at hand. Without one the binary is built anyway and runs its
// TypeScript paths (`worksnap --version` says which). `npm run release` builds every target (scripts/release.ts).
import { buildNative } from "./scripts/build-native.ts";
import { buildReviewPage } from "./scripts/build-page.ts";
import { compileWorksnap } from "./scripts/compile.ts";
import { HOST_TARGET } from "./scripts/targets.ts";

const native = buildNative();
console.log(native.ok ? `built ${native.output} (${native.compiler})` : `note: native module not built: ${native.reason}; the binary uses its TypeScript paths`);
console.log(`built ${await buildReviewPage()}`);
const info = await compileWorksnap({ target: HOST_TARGET, outfile: "dist/worksnap", nativeNote: native.ok ? "" : `not built: ${native.reason.split("\n")[0]}` });
console.log(`built dist/worksnap (${info.target}, commit ${info.commit})`);
