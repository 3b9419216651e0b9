import { Schema } from "effect"

/** Sign-in and refresh answer. `access_token` and `refresh_token` appear only here. */
export const TokenResponse = Schema.Struct({
  access_token: Schema.String,
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  refresh_token: Schema.String,
  scope: Schema.String,
  issued_at: Schema.String,
  expiration_date: Schema.String,
  message: Schema.String
}).annotate({ identifier: "Token" })
export type TokenResponse = typeof TokenResponse.Type

export const TokenCheck = Schema.Struct({
  token_type: Schema.Literal("Bearer"),
  expires_in: Schema.Int,
  scope: Schema.String,
  is_valid: Schema.Boolean,
  issued_at: Schema.String,
  expiration_date: Schema.String,
  message: Schema.String
}).annotate({ identifier: "TokenCheck" })
export type TokenCheck = typeof TokenCheck.Type

export const Success = Schema.Struct({ success: Schema.Boolean }).annotate({ identifier: "Success" })
export type Success = typeof Success.Type
