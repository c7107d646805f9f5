/**
 * The mapping file of `laoding share`: which legacy items of the shared folder go to which
 * agents, and which Go-era drafts belong to which agent. Validated with zod; its hash ties
 * a passing `verify` to the `cleanup` that may follow (same mapping, same bytes).
 *
 * ```json
 * { "version": 1,
 *   "items": [ { "path": "scripts/deploy.sh", "agents": ["ops"] },
 *              { "path": "runbooks", "agents": ["ops", "dev"], "to": "docs/runbooks" } ],
 *   "goSkills": { "dir": "/srv/old-laoding/skills", "drafts": [ { "name": "auto_export_report", "agent": "ops" } ] } }
 * ```
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { z } from "zod";
import { AGENT_ID_PATTERN } from "../config/agents.js";
import { ConfigError, jsonErrorLocation, locateJsonPath } from "../config/config-error.js";
import { isGoEraDraftName } from "../knowledge/go-era-skill.js";
import { describeIssues } from "../validation/describe-issues.js";

/** Names at the share root that are the new layout, never legacy items. */
export const RESERVED_SHARE_NAMES = new Set(["README.md", "agent-experience", "agents"]);

const relativePath = z
  .string()
  .min(1)
  .max(1024)
  .refine(
    (path) =>
      !path.startsWith("/") &&
      !path.includes("\0") &&
      !path.includes("\\") &&
      path.split("/").every((part) => part !== "" && part !== "." && part !== ".."),
    {
      message: "must be a relative path inside the folder: no leading /, no empty, . or .. segments, no \\ or NUL",
    },
  );
const agentId = z.string().regex(AGENT_ID_PATTERN, { message: "is not an agent id" });

export const shareMappingSchema = z
  .object({
    version: z.literal(1),
    items: z
      .array(
        z
          .object({
            path: relativePath.refine((path) => !RESERVED_SHARE_NAMES.has(path.split("/")[0] as string), {
              message: "names the new layout (README.md, agent-experience/, agents/), not a legacy item",
            }),
            agents: z.array(agentId).min(1),
            to: relativePath.optional(),
          })
          .strict(),
      )
      .default([]),
    goSkills: z
      .object({
        dir: z.string().min(1).optional(),
        drafts: z
          .array(
            z
              .object({
                name: z
                  .string()
                  .refine(isGoEraDraftName, { message: "is not a Go-era draft name (auto_<intent_key>)" }),
                agent: agentId,
              })
              .strict(),
          )
          .default([]),
      })
      .strict()
      .optional(),
  })
  .strict();

export type ShareMapping = z.output<typeof shareMappingSchema>;
export type LoadedMapping = { mapping: ShareMapping; path: string; hash: string };

export function loadShareMapping(path: string, knownAgents: string[]): LoadedMapping {
  let text: string;
  try {
    text = readFileSync(path, "utf8");
  } catch (error) {
    throw new ConfigError(
      `cannot read the mapping file ${path}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`,
      { hint: "Pass --mapping FILE (docs/isolation.md shows one)" },
    );
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (error) {
    throw new ConfigError(
      `${path}${jsonErrorLocation(text, error as Error)}: the mapping file is not valid JSON: ${(error as Error).message}`,
      { hint: "Fix the JSON (docs/isolation.md shows an example)" },
    );
  }
  const parsed = shareMappingSchema.safeParse(json);
  if (!parsed.success) {
    // Each problem where it is in the file, as agents.json's are.
    const findings = parsed.error.issues.map(
      (issue) => `${locateJsonPath(text, path, issue.path)}: ${describeIssues(new z.ZodError([issue]))}`,
    );
    throw new ConfigError(
      findings.length === 1
        ? `the mapping file is invalid: ${findings[0]}`
        : `the mapping file ${path} is invalid:\n  - ${findings.join("\n  - ")}`,
      { hint: "Fix those fields (docs/isolation.md shows an example)", findings },
    );
  }
  const unknown = [
    ...parsed.data.items.flatMap((item) => item.agents),
    ...(parsed.data.goSkills?.drafts ?? []).map((draft) => draft.agent),
  ].filter((id) => !knownAgents.includes(id));
  if (unknown.length > 0)
    throw new ConfigError(`the mapping file ${path} names unknown agents: ${[...new Set(unknown)].join(", ")}`, {
      hint: `Known agents (configs/agents.json): ${knownAgents.join(", ")}`,
    });
  return { mapping: parsed.data, path, hash: createHash("sha256").update(text).digest("hex") };
}
