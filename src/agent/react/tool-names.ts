/**
 * Tool names as the OpenAI API accepts them (`^[a-zA-Z0-9_-]{1,64}$`): `file.read` is
 * offered as `file_read` and mapped back before the toolhost call.
 */
export function toModelToolName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}

/**
 * Model name -> toolhost name, one model name per tool in list order. Two names can meet
 * once spelled for the API (`mcp.a_b.x` and `mcp.a.b_x` are both `mcp_a_b_x`): the later
 * one gets a numbered name instead of taking the earlier one's place. A `reserved` name
 * (the bot's own tools, such as report_gap) is never given to a toolhost tool either.
 */
export function toolNameMap(names: readonly string[], reserved: readonly string[] = []): Map<string, string> {
  const map = new Map<string, string>();
  const taken = (modelName: string) => map.has(modelName) || reserved.includes(modelName);
  for (const name of names) {
    const base = toModelToolName(name);
    let modelName = base;
    for (let counter = 2; taken(modelName); counter += 1) {
      const suffix = `_${counter}`;
      modelName = `${base.slice(0, 64 - suffix.length)}${suffix}`;
    }
    map.set(modelName, name);
  }
  return map;
}
