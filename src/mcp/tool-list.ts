import type { ToolDef } from "./define-tool";
import { historyList } from "./tools/history_list";
import { historyUndo } from "./tools/history_undo";
import { snapshotChangesTool } from "./tools/snapshot_changes";
import { snapshotCreate } from "./tools/snapshot_create";
import { snapshotDiffTool } from "./tools/snapshot_diff";
import { snapshotExportTool } from "./tools/snapshot_export";
import { snapshotFile } from "./tools/snapshot_file";
import { snapshotGrepTool } from "./tools/snapshot_grep";
import { snapshotInfoTool } from "./tools/snapshot_info";
import { snapshotList } from "./tools/snapshot_list";
import { workspaceApplyPatch } from "./tools/workspace_apply_patch";
import { workspaceDelete } from "./tools/workspace_delete";
import { workspaceMove } from "./tools/workspace_move";
import { workspaceWriteFile } from "./tools/workspace_write_file";
import { checkTool } from "./tools/check";
import { snapTool } from "./tools/snap";
import { snapEndTool } from "./tools/snap_end";
import { snapFixTool } from "./tools/snap_fix";
import { snapHelpTool } from "./tools/snap_help";
import { snapLearnTool } from "./tools/snap_learn";
import { snapViolationTool } from "./tools/snap_violation";

/** Every tool the server offers, in the order tools/list shows them. */
export const TOOLS: ToolDef<unknown>[] = [snapshotCreate, snapshotList, snapshotFile, snapshotInfoTool, snapshotGrepTool, snapshotChangesTool, snapshotDiffTool, snapshotExportTool, workspaceApplyPatch, workspaceWriteFile, workspaceDelete, workspaceMove, historyList, historyUndo, snapTool, checkTool, snapEndTool, snapLearnTool, snapViolationTool, snapFixTool, snapHelpTool] as unknown as ToolDef<unknown>[];
