/** The workspace folder: a usable location (not /proc, not a file) that `laoding init` has seeded. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { checkWorkspaceLocation } from "../config/workspace-location.js";
import { failed, failedFromError, passed, type CheckResult } from "./check-result.js";

export function checkWorkspace(workspaceDir: string, exists: (path: string) => boolean = existsSync): CheckResult {
  const title = `workspace ${workspaceDir}`;
  try {
    checkWorkspaceLocation(workspaceDir);
  } catch (error) {
    return failedFromError("workspace", title, error, "Choose another --workspace");
  }
  if (!exists(join(workspaceDir, "configs", "agents.json"))) {
    return failed(
      "workspace",
      title,
      exists(workspaceDir) ? "it has no configs/agents.json: it was never seeded" : "it does not exist",
      `laoding init --workspace ${workspaceDir}`,
    );
  }
  return passed("workspace", title);
}
