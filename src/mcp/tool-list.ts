import type { ToolDef } from "./define-tool";
import { snapshotCreate } from "./tools/snapshot_create";
import { snapshotFile } from "./tools/snapshot_file";
import { snapshotInfoTool } from "./tools/snapshot_info";
import { snapshotList } from "./tools/snapshot_list";

/** Every tool the server offers, in the order tools/list shows them. */
export const TOOLS: ToolDef<unknown>[] = [snapshotCreate, snapshotList, snapshotFile, snapshotInfoTool] as unknown as ToolDef<unknown>[];
