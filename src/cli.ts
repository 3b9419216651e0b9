/**
 * Operator commands: `npm run cli -- bots add --token … | bots list | bots remove <id>`,
 * `taskboard pair <serverId> --team … --key … --token … | unpair <serverId>`, `keys reencrypt`.
 * `--help` on any command shows its arguments and flags. A running gateway sees bot changes within
 * 5 s (the registry's TTL, layers/platform/BotsSql.ts) and pairing changes at its next request.
 * An operator's mistake is one line on stderr, never a stack: exit 1 for a refusal (unknown id, a
 * token the platform refuses, the database or the platform unreachable), 2 for the configuration or
 * the command line. `LOG_LEVEL=Debug` adds the full cause.
 */
import { NodeRuntime, NodeServices } from "@effect/platform-node"
import { Cause, Console, Effect, Layer, Redacted, References, Schema } from "effect"
import { Argument, CliOutput, Command, Flag } from "effect/cli"
import { FetchHttpClient } from "effect/http"
import { loadConfig } from "./layers/config/AppConfig.ts"
import type { AppConfigShape } from "./layers/config/AppConfig.ts"
import { keyringOf } from "./layers/config/KeyringFile.ts"
import { operatorSettings } from "./layers/config/OperatorSettings.ts"
import { BotsSql } from "./layers/platform/BotsSql.ts"
import { DatabaseLive } from "./layers/infra/Database.ts"
import { TaskboardPairingsSql } from "./layers/taskboard/TaskboardPairingsSql.ts"
import { ChatPlatformDiscord } from "./layers/platform/discord/ChatPlatformDiscord.ts"
import { SandboxMode } from "./sandbox/SandboxMode.ts"
import { Bots } from "./services/platform/Bots.ts"
import { ChatPlatform } from "./services/platform/ChatPlatform.ts"
import { Cipher } from "./services/infra/Cipher.ts"
import { reencryptAll } from "./layers/infra/Reencrypt.ts"
import { TaskboardPairings } from "./services/taskboard/TaskboardPairings.ts"
import { BotApplicationsSql } from "./layers/submissions/BotApplicationsSql.ts"
import { registerBot } from "./layers/submissions/CommandRegistration.ts"
import { BotApplications } from "./services/submissions/BotApplications.ts"

import { VERSION } from "./domain/infra/Version.ts"

/** A refusal the operator can act on: printed as one line, exit 1 (2 for configuration). */
class OperatorError extends Error {
  constructor(message: string, readonly exitCode = 1) {
    super(message)
  }
}

/** Database, cipher, registry and the platform client, from the same configuration as the server. */
const Env = Layer.unwrap(Effect.gen(function*() {
  const config = yield* loadConfig
  const db = DatabaseLive({ url: config.databaseUrl, dataDir: config.dataDir, maxConnections: config.databasePoolSize, applicationName: "gateway-cli" })
  const keyring = yield* keyringOf(config, { generate: false }).pipe(Effect.mapError((e) => new OperatorError(e.message, 2)))
  const cipher = Cipher.layer(keyring)
  const base = Layer.mergeAll(BotsSql, TaskboardPairingsSql, BotApplicationsSql).pipe(Layer.provideMerge(cipher), Layer.provideMerge(db))
  const chat = ChatPlatformDiscord.layer(SandboxMode.of(config).platform).pipe(Layer.provide(FetchHttpClient.layer))
  return Layer.mergeAll(base, chat)
}))

/** Only the command that runs opens the database: `--help` and parse errors need nothing. */
const withEnv = <const Name extends string, Input, ContextInput, E, R>(self: Command.Command<Name, Input, ContextInput, E, R>) =>
  Command.provide(self, Env)

/** A chat-platform id, checked while parsing (before anything is opened). */
const idArgument = (name: string, description: string) =>
  Argument.String(name).pipe(
    Argument.withDescription(description),
    Argument.withSchema(Schema.String.check(Schema.isPattern(/^[0-9]{1,20}$/, { message: "expected a decimal id of up to 20 digits" })))
  )

const botsAdd = Command.make("add", {
  token: Flag.String("token").pipe(Flag.withDescription("The bot's token, as the chat platform's developer portal shows it"))
}, ({ token }) =>
  Effect.gen(function*() {
    const chat = yield* ChatPlatform
    const bots = yield* Bots
    const secret = Redacted.make(token)
    const me = yield* chat.getBotUser(secret)
    const bot = { id: me.id, name: me.global_name ?? me.username, icon: me.avatar, token: secret }
    yield* bots.upsert(bot)
    yield* Console.log(`added bot ${me.id} (${me.username})`)
    // Its application's public key (interactions are verified with it) and its /submit command.
    const config = yield* loadConfig
    yield* registerBot(bot).pipe(
      Effect.flatMap(({ application }) => Console.log(`interactions endpoint URL: ${interactionsUrl(config, application.id)}`)),
      Effect.catch((e) =>
        Console.error(`warning: the bot's application could not be read (${"message" in e ? String(e.message) : String(e)}); its interactions are refused until \`bots add\` runs again`))
    )
  })).pipe(
    Command.withDescription("Register a bot (or replace its token), reading its id, name, application and public key from the chat platform, and register its /submit command"),
    Command.withExamples([{ command: "gateway bots add --token <bot token>", description: "Register a bot" }]),
    withEnv
  )

const botsList = Command.make("list", {}, () =>
  Effect.gen(function*() {
    const bots = yield* Bots
    const apps = yield* BotApplications
    const config = yield* loadConfig
    for (const b of yield* bots.list) {
      const app = yield* apps.byBot(b.id)
      yield* Console.log(`${b.id}\t${b.name}\t${app === undefined ? "-" : interactionsUrl(config, app.applicationId)}`)
    }
  })).pipe(
    Command.withDescription("List the registered bots: id, name and the Interactions Endpoint URL to set on the platform (- until its application is read), tab-separated"),
    withEnv
  )

/** `{PUBLIC_URL}/interactions/{appClientId}`: where the platform sends the bot's interactions. */
const interactionsUrl = (config: Pick<AppConfigShape, "publicUrl">, applicationId: string) =>
  `${config.publicUrl.replace(/\/+$/, "")}/interactions/${applicationId}`

const botsRemove = Command.make("remove", {
  id: idArgument("id", "The bot's id (bots list shows them)")
}, ({ id: botId }) =>
  Effect.gen(function*() {
    const bots = yield* Bots
    if (!(yield* bots.remove(botId))) return yield* Effect.fail(new OperatorError(`there is no bot ${botId} in the registry (bots list shows them)`))
    yield* Console.log(`removed bot ${botId}`)
  })).pipe(Command.withDescription("Remove a bot from the registry; running gateways stop serving it within 5 s"), withEnv)

const serverIdArgument = idArgument("serverId", "The server's (guild's) id")

const pair = Command.make("pair", {
  serverId: serverIdArgument,
  team: Flag.String("team").pipe(Flag.withDescription("The Trello team (organization) id")),
  key: Flag.String("key").pipe(Flag.withDescription("The team's Trello API key")),
  token: Flag.String("token").pipe(Flag.withDescription("A Trello token with read access to the team's boards"))
}, ({ key, serverId: id, team, token }) =>
  Effect.gen(function*() {
    const pairings = yield* TaskboardPairings
    yield* pairings.pair(id, { teamId: team, key: Redacted.make(key), token: Redacted.make(token) })
    yield* Console.log(`server ${id} paired with task-board team ${team}`)
  })).pipe(
    Command.withDescription("Pair a server with a task-board (Trello) team, or replace its pairing"),
    Command.withExamples([{
      command: "gateway taskboard pair 300000000000000001 --team <team id> --key <api key> --token <token>",
      description: "Pair a server"
    }]),
    withEnv
  )

const unpair = Command.make("unpair", { serverId: serverIdArgument }, ({ serverId: id }) =>
  Effect.gen(function*() {
    const pairings = yield* TaskboardPairings
    if (!(yield* pairings.unpair(id))) return yield* Effect.fail(new OperatorError(`server ${id} is not paired with a task-board team`))
    yield* Console.log(`server ${id} unpaired`)
  })).pipe(Command.withDescription("Unpair a server from its task-board team"), withEnv)

const reencrypt = Command.make("reencrypt", {}, () =>
  Effect.gen(function*() {
    const moved = yield* reencryptAll
    yield* Console.log(`re-encrypted ${moved} secrets under the active key`)
  })).pipe(
    Command.withDescription("Re-encrypt every stored secret under the active (first) TOKEN_ENCRYPTION_KEY, after a key rotation"),
    withEnv
  )

const cli = Command.make("gateway").pipe(
  Command.withDescription(
    "Operator commands of the Bot Module Configuration Gateway. They read the same environment as the server (DATABASE_URL or DATA_DIR, TOKEN_ENCRYPTION_KEY, the platform's variables)."
  ),
  Command.withSubcommands([
    Command.make("bots").pipe(
      Command.withDescription("The bots registry: which bots the gateway serves, with their tokens"),
      Command.withSubcommands([botsAdd, botsList, botsRemove])
    ),
    Command.make("taskboard").pipe(
      Command.withDescription("Task-board (Trello) pairings of servers, for the forms module"),
      Command.withSubcommands([pair, unpair])
    ),
    Command.make("keys").pipe(
      Command.withDescription("Encryption keys of the secrets at rest"),
      Command.withSubcommands([reencrypt])
    )
  ])
)

// ---------------------------------------------------------------------------------------------
// One line per failure
// ---------------------------------------------------------------------------------------------

const PARSE_ERRORS = new Set([
  "DuplicateOption", "InvalidValue", "MissingArgument", "MissingOption", "UnexpectedArgument",
  "UnknownSubcommand", "UnrecognizedOption", "ValidationError", "ShowHelp"
])

const messageOf = (e: unknown, databaseAt: string): { readonly line: string; readonly exitCode: number } => {
  if (e instanceof OperatorError) return { line: e.message, exitCode: e.exitCode }
  const o = (typeof e === "object" && e !== null ? e : {}) as {
    readonly _tag?: string
    readonly message?: string
    readonly problems?: ReadonlyArray<{ readonly message: string }>
    readonly status?: number
    readonly reason?: { readonly _tag?: string; readonly message?: string }
    readonly cause?: unknown
  }
  const message = typeof o.message === "string" ? o.message : String(e)
  switch (o._tag) {
    case "ConfigInvalid":
    case "ConfigError":
      return { line: `configuration error: ${message}`, exitCode: 2 }
    case "SqlError": {
      const reason = o.reason?._tag === undefined ? message : `${o.reason._tag}: ${o.reason.message ?? message}`
      return { line: `cannot use ${databaseAt}: ${reason}`, exitCode: 1 }
    }
    case "MigrationError":
      return { line: `cannot migrate ${databaseAt}: ${message}`, exitCode: 1 }
    case "PlatformRejected":
      return {
        line: o.status === 401
          ? "the chat platform refused the token (401): check the bot token"
          : `the chat platform refused the request (${o.status}): ${message}`,
        exitCode: 1
      }
    case "UserError":
      return messageOf(o.cause, databaseAt)
  }
  // The domain errors (ServiceUnavailable, RequestTimeout, …) carry their text in `problems`.
  if (Array.isArray(o.problems) && o.problems.length > 0) {
    return { line: o.problems.map((p) => p.message).join("; "), exitCode: 1 }
  }
  if (e instanceof Error && /ECONNREFUSED|ENOTFOUND|connect/i.test(message)) {
    return { line: `cannot use ${databaseAt}: ${message}`, exitCode: 1 }
  }
  return { line: o._tag !== undefined && message === "" ? o._tag : message, exitCode: 1 }
}

const report = (cause: Cause.Cause<unknown>) =>
  Effect.flatMap(operatorSettings, (settings) => Effect.sync(() => {
    const failure = Cause.findErrorOption(cause)
    const error = failure._tag === "Some" ? failure.value : Cause.squash(cause)
    const tag = (error as { readonly _tag?: string } | null)?._tag
    // The command-line parser's problems were printed by the presenter below, one line each.
    if (tag !== undefined && PARSE_ERRORS.has(tag)) {
      const errors = (error as { readonly errors?: ReadonlyArray<unknown> }).errors
      process.exitCode = tag === "ShowHelp" && (errors === undefined || errors.length === 0) ? 0 : 2
      return
    }
    const { exitCode, line } = messageOf(error, settings.databaseAt)
    process.stderr.write(`error: ${line.split("\n")[0]}\n`)
    if (settings.verbose) process.stderr.write(`${Cause.pretty(cause)}\n`)
    process.exitCode = exitCode
  }))

/** A mistyped command line: one line per problem and where the usage is, instead of the whole help page. */
const Presenter = CliOutput.layerPresenter({
  present: (event) =>
    event._tag === "InvalidInvocation"
      ? Effect.sync(() => {
        const usage = `${event.commandPath.join(" ")} --help`
        for (const e of event.errors) process.stderr.write(`error: ${e.message.split("\n")[0]} (${usage} shows the usage)\n`)
      })
      : CliOutput.defaultPresenter.present(event)
})

Command.run(cli, { version: VERSION }).pipe(
  Effect.catchCause(report),
  Effect.provide([NodeServices.layer, Presenter]),
  // Operators see their answer and errors, not the services' warnings (LOG_LEVEL=Warn or lower shows them).
  Effect.provideServiceEffect(References.MinimumLogLevel, Effect.map(operatorSettings, (s) => s.logLevel)),
  NodeRuntime.runMain({ disableErrorReporting: true })
)
