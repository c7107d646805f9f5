/** The share layout rule start-up enforces (config/share-layout-check.ts): no tree inside another agent's. */
import type { AgentDefinition } from "../config/agents.js";
import type { RuntimeLayout } from "../config/runtime-layout.js";
import { checkShareLayout } from "../config/share-layout-check.js";
import { failedFromError, passed, type CheckResult } from "./check-result.js";

export function checkLayout(layout: RuntimeLayout, agents: AgentDefinition[]): CheckResult {
  try {
    checkShareLayout(layout, agents);
  } catch (error) {
    return failedFromError("share-layout", "share layout", error, "Keep SHARE_DIR, WORK_DIR and extra folders apart");
  }
  return passed("share-layout", `share layout (share ${layout.shareDir}, work ${layout.workRoot})`);
}
