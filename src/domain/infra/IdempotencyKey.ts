/**
 * The `Idempotency-Key` request header (IETF httpapi draft "The Idempotency-Key HTTP Header Field",
 * with Stripe's semantics): what a key may be, and how it is documented. The rules that use it are in
 * http/edge/IdempotencyLive.ts; where the draft leaves a choice open, decisions are listed in README.
 */
import { Result } from "effect"

export const IDEMPOTENCY_HEADER = "idempotency-key"
export const MAX_KEY_LENGTH = 255
/** How long a key and its answer are kept: a retry later than this is a new request. */
export const KEY_TTL_HOURS = 24

// Printable ASCII (space to tilde): what any client can put in a header unencoded.
const PRINTABLE = /^[\x20-\x7e]+$/

/**
 * The key a request carries: absent (no header: the request runs as it always did), or the key,
 * or why it is refused. The draft's form is a structured-field string (`"abc"`); the bare form
 * (Stripe's, `abc`) is accepted too and names the same key.
 */
export const parseIdempotencyKey = (
  header: string | undefined
): Result.Result<string | undefined, string> => {
  if (header === undefined) return Result.succeed(undefined)
  const quoted = header.length >= 2 && header.startsWith("\"") && header.endsWith("\"")
  const key = quoted ? header.slice(1, -1) : header
  if (key.length === 0 || key.length > MAX_KEY_LENGTH || !PRINTABLE.test(key)) {
    return Result.fail(
      `The Idempotency-Key header must be 1 to ${MAX_KEY_LENGTH} printable ASCII characters (a UUID is a good key).`
    )
  }
  return Result.succeed(key)
}

/** The header as an OpenAPI parameter of every POST, PATCH and DELETE under /api/v1 (http/OpenApiDocument.ts). */
export const idempotencyKeyParameter = {
  name: "Idempotency-Key",
  in: "header",
  required: false,
  description:
    `Makes the request safe to retry: a retry with the same key, by the same user, with the same method, path and body within ${KEY_TTL_HOURS} h gets the first answer again (status, body, \`Content-Type\`, with \`Idempotent-Replayed: true\`) and changes nothing. The same key with another method, path or body: 422; while the first request with the key is still running: 409 (retry later). Answers 2xx and 4xx are kept, except 408, 409 and 429; a 5xx is not kept (the write did not happen) and the key can be retried. 1–${MAX_KEY_LENGTH} printable ASCII characters, bare or as a quoted string; a UUID v4 per operation is recommended. Without the header the request runs as usual.`,
  schema: { type: "string", minLength: 1, maxLength: MAX_KEY_LENGTH + 2, pattern: "^[\\x20-\\x7e]+$" }
} as const
