// Regenerates schemas/<tool>.json from the tool definitions (npm run schemas).
import { mkdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { schemaFileText } from "../src/mcp/schema-gen";
import { TOOLS } from "../src/mcp/tool-list";

const dir = join(import.meta.dir, "..", "schemas");
mkdirSync(dir, { recursive: true });
for (const def of TOOLS) writeFileSync(join(dir, `${def.name}.json`), schemaFileText(def));
console.log(`wrote ${TOOLS.length} schema files to schemas/`);
