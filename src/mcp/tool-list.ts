import type { ToolDef } from "./define-tool";
import { snapshotCreate } from "./tools/snapshot_create";
import { snapshotFile } from "./tools/snapshot_file";
import { snapshotInfoTool } from "./tools/snapshot_info";
import { snapshotList } from "./tools/snapshot_list";
import { workspaceDelete } from "./tools/workspace_delete";
import { workspaceMove } from "./tools/workspace_move";
import { workspaceWriteFile } from "./tools/workspace_write_file";

/** Every tool the server offers, in the order tools/list shows them. */
export const TOOLS: ToolDef<unknown>[] = [snapshotCreate, snapshotList, snapshotFile, snapshotInfoTool, workspaceWriteFile, workspaceDelete, workspaceMove] as unknown as ToolDef<unknown>[];
