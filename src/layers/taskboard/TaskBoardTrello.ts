/**
 * The live TaskBoard: Trello REST, `GET /1/organizations/{teamId}/boards?filter=open&fields=name`.
 * The key and token go in Trello's documented `Authorization: OAuth oauth_consumer_key=..., oauth_token=...`
 * header, not the query, so they never sit in a URL (headers named authorization are redacted in
 * traces). Pairings are looked up through a function: the registry's (`layerPairings`: the SQL
 * table with encrypted credentials) or, in sandbox mode, the sandbox's one (src/sandbox/SandboxMode.ts).
 * A pairing Trello no longer accepts (401, or the team is gone: 400/404) counts as unpaired, logged
 * as a warning, so the forms show board `-1` and the owner pairs again.
 *
 * The board writes a shared submission needs (lists, labels, cards, attachments) are in
 * TrelloBoardWrites.ts, over TrelloCalls.ts (rate limits, typed errors).
 *
 * Every form read and write needs the server's boards (issue #12: 60 of 84 upstream calls in a
 * burst were this one read), so a server's boards are cached per instance, like the chat client's
 * reads (DiscordCache.ts): identical concurrent reads make one call (coalescing) and an answer is
 * kept `cacheTtl` (default 30 s); failures are never kept. The key is the server *and its pairing*
 * (team and a hash of the credentials), and the pairing itself is read on every call: pairing,
 * re-pairing or unpairing (the CLI, another process) takes effect at the next request, and only a
 * change made inside Trello (a board opened, renamed or closed) waits out the TTL.
 */
import { Cache, Duration, Effect, Equal, Exit, Hash, Layer, Redacted, Schema } from "effect"
import { createHash } from "node:crypto"
import { HttpClient, HttpClientRequest } from "effect/http"
import type { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import type { Board } from "../../domain/forms/Form.ts"
import { lookupCounter } from "../../services/infra/Metrics.ts"
import { TaskBoard } from "../../services/taskboard/TaskBoard.ts"
import { makeBoardWrites } from "./TrelloBoardWrites.ts"
import type { Pairing } from "../../services/taskboard/TaskboardPairings.ts"
import { TaskboardPairings } from "../../services/taskboard/TaskboardPairings.ts"
import { DEFAULT_TIMEOUT, decode, get, sendRaw, unavailable, type Upstream } from "../sources/Upstream.ts"

/** A server's Trello team and the team's API key and token (the registry's `Pairing`). */
export type TaskBoardPairing = Pairing

export interface TaskBoardOptions {
  /** Default `https://api.trello.com`. */
  readonly baseUrl?: string | undefined
  /** Default 10 s. */
  readonly timeout?: Duration.Input | undefined
  /** The server's pairing, or undefined when it has none. */
  readonly pairings: (serverId: string) => Effect.Effect<TaskBoardPairing | undefined, RequestTimeout | ServiceUnavailable>
  /** How long a server's boards are kept; 0 only coalesces concurrent reads. Default 30 s. */
  readonly cacheTtl?: Duration.Input | undefined
  /** Servers kept. Default 10,000. */
  readonly cacheCapacity?: number | undefined
  /** The longest a board call waits in all for Trello's rate limit before failing as retryable. Default 15 s. */
  readonly maxRateLimitWait?: Duration.Input | undefined
}

/** A cache key: equal by server and pairing (team + credentials hash), carrying the pairing for the lookup. */
class BoardsKey {
  constructor(
    readonly id: string,
    readonly serverId: string,
    readonly pairing: TaskBoardPairing
  ) {}
  [Equal.symbol](that: unknown): boolean {
    return that instanceof BoardsKey && that.id === this.id
  }
  [Hash.symbol](): number {
    return Hash.string(this.id)
  }
}

const keyOf = (serverId: string, p: TaskBoardPairing) => {
  const credentials = createHash("sha256").update(`${Redacted.value(p.key)}\n${Redacted.value(p.token)}`).digest("base64url")
  return new BoardsKey(`${serverId}\n${p.teamId}\n${credentials}`, serverId, p)
}

const Boards = Schema.Array(Schema.Struct({ id: Schema.String, name: Schema.String }))

/** Trello's quoted OAuth header value: the credentials must not carry quotes. */
const quoted = (r: Redacted.Redacted<string>) => Redacted.value(r).replace(/["\\]/g, "")

const make = (options: TaskBoardOptions) =>
  Effect.gen(function*() {
    const u: Upstream = {
      client: yield* HttpClient.HttpClient,
      source: "task board",
      service: "Trello",
      timeout: options.timeout ?? DEFAULT_TIMEOUT
    }
    const baseUrl = options.baseUrl ?? "https://api.trello.com"

    const fetchBoards = ({ pairing, serverId }: BoardsKey): Effect.Effect<ReadonlyArray<Board> | undefined, RequestTimeout | ServiceUnavailable> =>
      Effect.gen(function*() {
        const answer = yield* sendRaw(
          u,
          get(baseUrl, `/1/organizations/${encodeURIComponent(pairing.teamId)}/boards`, {
            urlParams: { filter: "open", fields: "name" }
          }).pipe(HttpClientRequest.setHeader(
            "authorization",
            `OAuth oauth_consumer_key="${quoted(pairing.key)}", oauth_token="${quoted(pairing.token)}"`
          ))
        )
        if (answer.status === 401 || answer.status === 400 || answer.status === 404) {
          yield* Effect.logWarning("Trello no longer accepts a server's pairing; treating it as unpaired").pipe(
            Effect.annotateLogs({ serverId, status: answer.status })
          )
          return undefined
        }
        if (answer.status !== 200) return yield* Effect.fail(unavailable(u, `refused the request (${answer.status})`))
        return yield* decode(u, Boards)(answer.body)
      }).pipe(Effect.withSpan("TaskBoard.boards", { attributes: { serverId } }))

    const ttl = options.cacheTtl ?? "30 seconds"
    const cache = yield* Cache.makeWith(fetchBoards, {
      capacity: options.cacheCapacity ?? 10_000,
      timeToLive: (exit) => (Exit.isSuccess(exit) ? ttl : Duration.zero)
    })

    const count = lookupCounter("taskboard.boards")
    const read = (key: BoardsKey) => Effect.flatMap(Cache.has(cache, key), (found) => Effect.andThen(count(found), Cache.get(cache, key)))
    const boards = (serverId: string): Effect.Effect<ReadonlyArray<Board> | undefined, RequestTimeout | ServiceUnavailable> =>
      Effect.flatMap(options.pairings(serverId), (pairing) =>
        pairing === undefined ? Effect.succeed(undefined) : read(keyOf(serverId, pairing)))

    const writes = yield* makeBoardWrites({
      baseUrl,
      timeout: u.timeout,
      maxRateLimitWait: options.maxRateLimitWait,
      pairings: options.pairings
    })
    return TaskBoard.of({ boards, ...writes })
  })

export const TaskBoardTrello = {
  /** Needs an HttpClient (FetchHttpClient.layer). */
  layer: (options: TaskBoardOptions): Layer.Layer<TaskBoard, never, HttpClient.HttpClient> =>
    Layer.effect(TaskBoard, make(options)),
  /** Pairings from the registry (`TaskboardPairings`). Needs an HttpClient too. */
  layerPairings: (
    options: Omit<TaskBoardOptions, "pairings">
  ): Layer.Layer<TaskBoard, never, HttpClient.HttpClient | TaskboardPairings> =>
    Layer.effect(TaskBoard, Effect.gen(function*() {
      const pairings = yield* TaskboardPairings
      return yield* make({ ...options, pairings: pairings.get })
    }))
}
