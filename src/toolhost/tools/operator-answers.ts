/**
 * The answers of the operator.* tools, declared once: the child builds them to these types
 * (operator-tools.ts) and the parent checks what arrives against these schemas
 * (runtime/operator-files.ts). Imports nothing but zod, so the parent loads no tool code.
 */
import { z } from "zod";

/** operator.read: one page of a file's bytes; `next` is the offset of the following page, null at the end. */
export const operatorReadPageSchema = z.object({
  size: z.number(),
  offset: z.number(),
  next: z.number().nullable(),
  base64: z.string(),
});
export type OperatorReadPage = z.infer<typeof operatorReadPageSchema>;

/** operator.stat: one path's entry (links not followed), or the error code that kept it from being looked at. */
export const operatorStatSchema = z.union([
  z.object({ path: z.string(), error: z.string() }),
  z.object({
    path: z.string(),
    type: z.enum(["file", "dir", "link", "other", "missing"]),
    sizeBytes: z.number().optional(),
    mtimeMs: z.number().optional(),
    mode: z.number().optional(),
    sha256: z.string().optional(),
  }),
]);
export type OperatorStat = z.infer<typeof operatorStatSchema>;
export const operatorStatListSchema = z.array(operatorStatSchema);

/** One library document as operator.library-docs lists it: its frontmatter fields, size and modification time. */
export const operatorDocSchema = z.object({
  fileName: z.string(),
  title: z.string(),
  keywords: z.array(z.string()),
  summary: z.string(),
  applicable: z.string(),
  lastVerified: z.string(),
  sizeBytes: z.number(),
  updatedAt: z.string(),
});
export type OperatorDoc = z.infer<typeof operatorDocSchema>;

/** operator.library-docs: one page of documents and how many the library holds. */
export const operatorDocsPageSchema = z.object({ total: z.number(), docs: z.array(operatorDocSchema) });
export type OperatorDocsPage = z.infer<typeof operatorDocsPageSchema>;
