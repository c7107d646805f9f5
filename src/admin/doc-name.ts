/**
 * The one rule for a document name an operator sends (`file`, `fileName`): a plain base
 * name of the form `YYYY-MM-DD-<slug>.md` (DECISIONS.md), or INDEX.md for reads. Checked
 * after the URL decoding the server did once, so `%2e%2e%2f` arrives as `../` and is
 * refused, and a second encoding leaves a `%`, which no document name holds. The child
 * checks again, after realpath, that the file lies in the library (operator.* `within`).
 */
import { INDEX_FILE, isLibraryDocName } from "../knowledge/library/library-doc.js";
import { AdminError } from "./admin-errors.js";

export type DocNameUse = "read" | "write";

export function checkDocName(value: unknown, field: string, use: DocNameUse): string {
  if (typeof value !== "string" || value.length === 0) throw invalid(field, "is missing or empty");
  if (value.includes("\0")) throw invalid(field, "contains a NUL byte");
  if (/[/\\]/.test(value)) throw invalid(field, "must be a plain file name, without / or \\");
  if (value.includes("..")) throw invalid(field, "must not contain ..");
  if (value.includes("%"))
    throw invalid(field, "must not be percent-encoded (send the name as it is, URL-encoded once)");
  if (value === INDEX_FILE) {
    if (use === "read") return value;
    throw invalid(field, `${INDEX_FILE} is generated; rebuild it with POST .../experience-library/index/rebuild`);
  }
  if (!value.endsWith(".md")) throw invalid(field, "must end in .md");
  if (!isLibraryDocName(value))
    throw invalid(field, "must be named YYYY-MM-DD-<slug>.md (letters, digits and hyphens in the slug)");
  return value;
}

function invalid(field: string, problem: string): AdminError {
  return new AdminError("INVALID_FILE_NAME", `${field} ${problem}`);
}
