/**
 * Tool names as the OpenAI API accepts them (`^[a-zA-Z0-9_-]{1,64}$`): `file.read` is
 * offered as `file_read` and mapped back before the toolhost call.
 */
export function toModelToolName(name: string): string {
  return name.replace(/[^a-zA-Z0-9_-]/g, "_").slice(0, 64);
}

export function toolNameMap(names: readonly string[]): Map<string, string> {
  return new Map(names.map((name) => [toModelToolName(name), name]));
}
