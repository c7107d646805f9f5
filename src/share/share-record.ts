/**
 * The record of the last `laoding share verify`: `<workspace>/data/share-verify.json`,
 * written atomically. `cleanup` reads it and goes ahead only when it says passed for the
 * same mapping (the sha256 of the mapping file's bytes).
 */
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, renameSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { z } from "zod";

const recordSchema = z.object({
  mappingHash: z.string(),
  mappingPath: z.string(),
  passed: z.boolean(),
  verifiedAt: z.string(),
  copies: z.number(),
  problems: z.array(z.string()),
});
export type VerifyRecord = z.output<typeof recordSchema>;

export const verifyRecordFile = (dataDir: string) => join(dataDir, "share-verify.json");

export function writeVerifyRecord(path: string, record: VerifyRecord): void {
  writeRecordAtomically(path, record);
}

/** Writes a JSON record in the bot's data folder: a temp file (0600) renamed over the old one, so a reader never sees half. */
export function writeRecordAtomically(path: string, record: unknown): void {
  mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
  const temp = `${path}.tmp-${randomBytes(6).toString("hex")}`;
  writeFileSync(temp, `${JSON.stringify(record, null, 2)}\n`, { mode: 0o600, flag: "wx" });
  renameSync(temp, path);
}

export function readVerifyRecord(path: string): VerifyRecord | undefined {
  try {
    const parsed = recordSchema.safeParse(JSON.parse(readFileSync(path, "utf8")));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
}
