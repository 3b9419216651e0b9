/**
 * Operator commands: `npm run cli -- bots add --token … | bots list | bots remove <id>`,
 * `taskboard pair <serverId> --team … --key … --token … | unpair <serverId>`, `keys reencrypt`.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Console, Effect, Layer, Redacted } from "effect"
import { Argument, Command, Flag } from "effect/cli"
import { FetchHttpClient } from "effect/http"
import { existsSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { loadConfig } from "./layers/config/AppConfig.ts"
import type { AppConfigShape } from "./layers/config/AppConfig.ts"
import { BotsSql } from "./layers/sql/BotsSql.ts"
import { DatabaseLive } from "./layers/sql/Database.ts"
import { TaskboardPairingsSql } from "./layers/sql/TaskboardPairingsSql.ts"
import { ChatPlatformDiscord } from "./layers/discord/ChatPlatformDiscord.ts"
import { SandboxMode } from "./sandbox/SandboxMode.ts"
import { Bots } from "./services/Bots.ts"
import { ChatPlatform } from "./services/ChatPlatform.ts"
import { Cipher, parseKeyring } from "./services/Cipher.ts"
import { reencryptAll } from "./layers/sql/Reencrypt.ts"
import { TaskboardPairings } from "./services/TaskboardPairings.ts"

const keyringOf = (config: AppConfigShape) => {
  if (config.keyring !== undefined) return config.keyring
  const file = join(config.dataDir, "token-encryption.key")
  if (!existsSync(file)) throw new Error("TOKEN_ENCRYPTION_KEY is not set and the data folder has no sandbox key yet")
  return parseKeyring(readFileSync(file, "utf8").trim())
}

/** Database, cipher, registry and the platform client, from the same configuration as the server. */
const Env = Layer.unwrap(Effect.gen(function*() {
  const config = yield* loadConfig
  const db = DatabaseLive({ url: config.databaseUrl, dataDir: config.dataDir })
  const cipher = Cipher.layer(keyringOf(config))
  const base = Layer.mergeAll(BotsSql, TaskboardPairingsSql).pipe(Layer.provideMerge(cipher), Layer.provideMerge(db))
  const chat = ChatPlatformDiscord.layer(SandboxMode.of(config).platform).pipe(Layer.provide(FetchHttpClient.layer))
  return Layer.mergeAll(base, chat)
}))

const botsAdd = Command.make("add", { token: Flag.String("token").pipe(Flag.withDescription("The bot's token")) }, ({ token }) =>
  Effect.gen(function*() {
    const chat = yield* ChatPlatform
    const bots = yield* Bots
    const secret = Redacted.make(token)
    const me = yield* chat.getBotUser(secret)
    yield* bots.upsert({ id: me.id, name: me.global_name ?? me.username, icon: me.avatar, token: secret })
    yield* Console.log(`added bot ${me.id} (${me.username})`)
  })).pipe(Command.withDescription("Register a bot, reading its identity from the chat platform"))

const botsList = Command.make("list", {}, () =>
  Effect.gen(function*() {
    const bots = yield* Bots
    for (const b of yield* bots.list) yield* Console.log(`${b.id}\t${b.name}`)
  })).pipe(Command.withDescription("List the registered bots"))

const botsRemove = Command.make("remove", { id: Argument.String("id") }, ({ id }) =>
  Effect.gen(function*() {
    const bots = yield* Bots
    yield* Console.log((yield* bots.remove(id)) ? `removed bot ${id}` : `no bot ${id}`)
  })).pipe(Command.withDescription("Remove a bot from the registry"))

const pair = Command.make("pair", {
  serverId: Argument.String("serverId"),
  team: Flag.String("team"),
  key: Flag.String("key"),
  token: Flag.String("token")
}, ({ key, serverId, team, token }) =>
  Effect.gen(function*() {
    const pairings = yield* TaskboardPairings
    yield* pairings.pair(serverId, { teamId: team, key: Redacted.make(key), token: Redacted.make(token) })
    yield* Console.log(`server ${serverId} paired with task-board team ${team}`)
  })).pipe(Command.withDescription("Pair a server with a task-board (Trello) team"))

const unpair = Command.make("unpair", { serverId: Argument.String("serverId") }, ({ serverId }) =>
  Effect.gen(function*() {
    const pairings = yield* TaskboardPairings
    yield* Console.log((yield* pairings.unpair(serverId)) ? `server ${serverId} unpaired` : `server ${serverId} was not paired`)
  })).pipe(Command.withDescription("Unpair a server from its task-board team"))

const reencrypt = Command.make("reencrypt", {}, () =>
  Effect.gen(function*() {
    const moved = yield* reencryptAll
    yield* Console.log(`re-encrypted ${moved} secrets under the active key`)
  })).pipe(Command.withDescription("Re-encrypt every stored secret under the active TOKEN_ENCRYPTION_KEY"))

const cli = Command.make("gateway").pipe(
  Command.withSubcommands([
    Command.make("bots").pipe(Command.withSubcommands([botsAdd, botsList, botsRemove])),
    Command.make("taskboard").pipe(Command.withSubcommands([pair, unpair])),
    Command.make("keys").pipe(Command.withSubcommands([reencrypt]))
  ]),
  Command.run({ version: "0.1.0" })
)

cli.pipe(
  Effect.provide(Env),
  Effect.provide(NodeServices.layer),
  NodeRuntime.runMain
)
