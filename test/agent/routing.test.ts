import { describe, expect, it } from "vitest";
import { normalizeIntentKey } from "../../src/agent/gaps/intent-key.js";
import { shortlistSkills } from "../../src/agent/routing/lexical-shortlist.js";
import { extractJsonObject } from "../../src/agent/routing/route-message.js";
import { words } from "../../src/knowledge/keywords.js";
import type { Skill } from "../../src/knowledge/skill.js";

const skill = (name: string, description: string): Skill => ({
  name,
  description,
  status: "active",
  body: "",
  path: `/s/${name}/SKILL.md`,
  source: "base",
});

describe("lexical shortlist", () => {
  it("passes small catalogs whole and cuts large ones by overlap, Chinese included", () => {
    const filler = Array.from({ length: 30 }, (_, index) =>
      skill(`filler-${index}`, `unrelated topic number ${index}`),
    );
    const catalog = [
      ...filler,
      skill("deploy-docker", "用 Docker 部署服务到服务器"),
      skill("skill-builder", "write a new skill"),
    ];
    expect(shortlistSkills(catalog.slice(0, 5), "anything")).toHaveLength(5);
    const chosen = shortlistSkills(catalog, "帮我把服务部署到服务器上", { size: 5, keep: "skill-builder" });
    expect(chosen).toHaveLength(5);
    expect(chosen[0]?.name).toBe("deploy-docker");
    expect(chosen.map((entry) => entry.name)).toContain("skill-builder");
  });
});

describe("keywords and intent keys", () => {
  it("segments Chinese and English words and drops stop words", () => {
    expect(words("请帮我部署 Docker 服务")).toEqual(["部署", "docker", "服务"]);
  });

  it("normalises model keys and derives keys from the text when there is none", () => {
    expect(normalizeIntentKey("Deploy Docker_Compose!", "")).toBe("deploy-docker-compose");
    expect(normalizeIntentKey("", "How do I deploy docker compose on the server?")).toBe(
      "deploy-docker-compose-server",
    );
    expect(normalizeIntentKey("", "部署服务")).toBe("部署-服务");
    expect(normalizeIntentKey("", "???")).toBe("unknown");
    expect(normalizeIntentKey("x".repeat(100), "")).toHaveLength(48);
  });

  it("extracts the JSON object from a chatty reply", () => {
    expect(extractJsonObject('Sure! ```json\n{"skills": []}\n``` hope it helps')).toEqual({ skills: [] });
    expect(extractJsonObject("none")).toBeUndefined();
  });
});
