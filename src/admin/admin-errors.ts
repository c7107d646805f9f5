/**
 * Every error the admin API answers with: a stable code (clients and the page key off it,
 * never off the message), its HTTP status, and a message that says what was wrong and
 * what to do. docs/admin-api.md lists the same table.
 */
export const ADMIN_ERROR_STATUS = {
  UNAUTHORIZED: 401,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  AGENT_NOT_FOUND: 404,
  DOC_NOT_FOUND: 404,
  DRAFT_NOT_FOUND: 404,
  LESSON_NOT_FOUND: 404,
  LESSON_STATE: 409,
  RULE_NOT_FOUND: 404,
  RULE_CANDIDATE_NOT_FOUND: 404,
  RULE_TOO_LONG: 400,
  RULE_REFUSED: 400,
  RULE_LIMIT: 409,
  RULE_EXISTS: 409,
  INVALID_FILE_NAME: 400,
  INVALID_REQUEST: 400,
  INVALID_BODY: 400,
  UNSUPPORTED_MEDIA_TYPE: 415,
  BODY_TOO_LARGE: 413,
  DOC_TOO_LARGE: 413,
  PATH_NOT_ALLOWED: 403,
  TOOLHOST_FAILED: 502,
  INTERNAL: 500,
} as const;

export type AdminErrorCode = keyof typeof ADMIN_ERROR_STATUS;

export class AdminError extends Error {
  override readonly name = "AdminError";
  readonly status: number;
  constructor(
    readonly code: AdminErrorCode,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.status = ADMIN_ERROR_STATUS[code];
  }
}
