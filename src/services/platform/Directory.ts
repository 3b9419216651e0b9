/**
 * Users, bots, servers and the permission rules of decisions.md ("Servers, modules, permissions"):
 * what the signed-in user may see and manage, read from the chat platform.
 */
import { Context } from "effect"
import type { Effect, Redacted } from "effect"
import type { Forbidden, NotFound, RequestTimeout, ServiceUnavailable, Unauthorized } from "../../domain/infra/Errors.ts"
import type { Bot, Module, ModuleName, Server, ServerSummary, User } from "../../domain/platform/Platform.ts"
import type { Principal } from "../../domain/auth/Principal.ts"
import type { Actor } from "../audit/AuditLog.ts"
import type { PlatformChannel, PlatformRole } from "./ChatPlatform.ts"

export type DirectoryError = Unauthorized | NotFound | Forbidden | RequestTimeout | ServiceUnavailable

/** What a module route may use once access is granted. */
export interface ServerAccess {
  readonly botId: string
  readonly botToken: Redacted.Redacted<string>
  readonly serverId: string
  readonly channels: ReadonlyArray<PlatformChannel>
  readonly roles: ReadonlyArray<PlatformRole>
  /** The signed-in user, for audit entries. */
  readonly actor: Actor
}

/** What a route needs: a module (its `available` rule) or the audit log (VIEW_AUDIT_LOG). */
export type Need = ModuleName | "logs" | "server"

export class Directory extends Context.Service<Directory, {
  readonly user: (principal: Principal) => Effect.Effect<User, DirectoryError>
  readonly bots: Effect.Effect<ReadonlyArray<Bot>, ServiceUnavailable>
  readonly servers: (principal: Principal, botId: string) => Effect.Effect<ReadonlyArray<ServerSummary>, NotFound | DirectoryError>
  readonly server: (principal: Principal, botId: string, serverId: string) => Effect.Effect<Server, NotFound | Forbidden | DirectoryError>
  readonly modules: (principal: Principal, botId: string, serverId: string) => Effect.Effect<ReadonlyArray<Module>, NotFound | Forbidden | DirectoryError>
  /**
   * 404 for an unknown bot or a server the bot is not in; 403 when the user may not manage the
   * server, or the module is not available to them, or (logs) lacks VIEW_AUDIT_LOG.
   */
  readonly access: (
    principal: Principal,
    botId: string,
    serverId: string,
    need: Need
  ) => Effect.Effect<ServerAccess, NotFound | Forbidden | DirectoryError>
}>()("gateway/Directory") {}

/** What the directory needs to know of the deployment (provided by src/layers/config/). */
export class DirectorySettings extends Context.Service<DirectorySettings, {
  /** PUBLIC_URL without a trailing slash: module images are served under `${publicUrl}/assets/modules/`. */
  readonly publicUrl: string
}>()("gateway/DirectorySettings") {}
