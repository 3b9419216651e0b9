import { Schema } from "effect"

export const EventType = Schema.Literals(["GET", "PUSH", "PATCH", "DELETE"])
export type EventType = typeof EventType.Type

export const AuditLogEntry = Schema.Struct({
  id: Schema.String,
  timestamp: Schema.String,
  user_id: Schema.String,
  user_name: Schema.String,
  user_avatar: Schema.NullOr(Schema.String),
  module_name: Schema.String,
  item_identifier: Schema.NullOr(Schema.Int),
  event_type: EventType,
  event_string: Schema.String
}).annotate({ identifier: "AuditLogEntry" })
export type AuditLogEntry = typeof AuditLogEntry.Type

export const AuditLogPage = Schema.Struct({
  logs: Schema.Array(AuditLogEntry),
  page: Schema.Int,
  page_size: Schema.Int,
  page_max: Schema.Int
}).annotate({ identifier: "AuditLogPage" })
export type AuditLogPage = typeof AuditLogPage.Type

/** Query of the logs route. Values stay strings here; the AuditLog service parses and checks them (400 naming the parameter). */
export const AuditLogQuery = Schema.Struct({
  module: Schema.optionalKey(Schema.String),
  start: Schema.optionalKey(Schema.String),
  end: Schema.optionalKey(Schema.String),
  page_size: Schema.optionalKey(Schema.String),
  page: Schema.optionalKey(Schema.String)
})
export type AuditLogQuery = typeof AuditLogQuery.Type
