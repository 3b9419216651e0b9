/**
 * The audit log's Action column: the verb the entry's text starts with ("Sent a test message of…" →
 * Sent, "Updated the options…" → Updated, "Disabled rss feed…" → Disabled), since one event type
 * covers several actions (`PUSH` is a create, a test message or a submission received:
 * gateway-api.md "Audit logs"); otherwise the event type in words. Pure.
 */
import type { EventType } from "../http/client.ts"

const BY_TYPE: Record<EventType, string> = { GET: "Read", PUSH: "Added", PATCH: "Changed", DELETE: "Removed" }
/** Past tenses that do not end in "ed". */
const IRREGULAR = new Set(["Sent", "Made", "Set", "Put", "Began"])

export const actionOf = (eventType: EventType, eventString: string): string => {
  const first = /^[A-Z][a-z]*(?:-[a-z]+)*(?=\s|$)/.exec(eventString)?.[0]
  return first !== undefined && (first.endsWith("ed") || IRREGULAR.has(first)) ? first : BY_TYPE[eventType]
}
