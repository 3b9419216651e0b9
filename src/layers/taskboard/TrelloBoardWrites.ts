/**
 * The board calls a shared submission needs, on Trello's REST API through the server's pairing:
 * `GET /1/boards/{id}/lists?filter=open`, `GET /1/boards/{id}/labels`, `POST /1/boards/{id}/lists`,
 * `POST /1/boards/{id}/labels`, `POST /1/cards`, `GET /1/boards/{id}/cards` and
 * `POST /1/cards/{id}/attachments`. Values go in
 * a JSON body (a card's text is personal data: never in a URL). Answers are decoded to the fields
 * the gateway uses; one of the wrong shape is a retryable failure (the caller's record decides).
 */
import { Duration, Effect, Schema } from "effect"
import type { RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { type NewCard, TaskBoardError } from "../../services/taskboard/TaskBoard.ts"
import type { Pairing } from "../../services/taskboard/TaskboardPairings.ts"
import { makeTrelloCalls } from "./TrelloCalls.ts"

const List = Schema.Struct({ id: Schema.String, name: Schema.String })
const Label = Schema.Struct({ id: Schema.String, name: Schema.NullOr(Schema.String), color: Schema.NullOr(Schema.String) })
const Card = Schema.Struct({
  id: Schema.String,
  name: Schema.String,
  idList: Schema.String,
  idLabels: Schema.Array(Schema.String),
  url: Schema.String,
  shortUrl: Schema.String
})
const ListedCard = Schema.Struct({ ...Card.fields, desc: Schema.String })
const Attachment = Schema.Struct({ id: Schema.String, url: Schema.String })

export interface BoardWritesOptions {
  readonly baseUrl: string
  readonly timeout: Duration.Input
  readonly maxRateLimitWait?: Duration.Input | undefined
  readonly pairings: (serverId: string) => Effect.Effect<Pairing | undefined, RequestTimeout | ServiceUnavailable>
}

const unexpected = new TaskBoardError({ reason: "unavailable", retryable: true, message: "Trello answered something unexpected." })

const decode = <S extends Schema.ConstraintDecoder<unknown>>(schema: S) => (body: unknown) =>
  Schema.decodeUnknownEffect(schema)(body).pipe(Effect.mapError(() => unexpected))

export const makeBoardWrites = (options: BoardWritesOptions) =>
  Effect.gen(function*() {
    const { call } = yield* makeTrelloCalls(options)

    /** The server's pairing, or the reason there is none to use. */
    const pairingOf = (serverId: string): Effect.Effect<Pairing, TaskBoardError> =>
      options.pairings(serverId).pipe(
        Effect.mapError((e) =>
          new TaskBoardError({
            reason: e._tag === "RequestTimeout" ? "timeout" : "unavailable",
            retryable: true,
            message: "The server's task-board pairing could not be read; retry."
          })
        ),
        Effect.flatMap((p) =>
          p === undefined
            ? Effect.fail(new TaskBoardError({ reason: "unpaired", retryable: false, message: "The server is not paired with a task board." }))
            : Effect.succeed(p)
        )
      )

    const as = (serverId: string, span: string, run: (p: Pairing) => Effect.Effect<unknown, TaskBoardError>) =>
      Effect.flatMap(pairingOf(serverId), run).pipe(Effect.withSpan(span, { attributes: { serverId } }))

    const board = (boardId: string) => `/1/boards/${encodeURIComponent(boardId)}`

    return {
      lists: (serverId: string, boardId: string) =>
        as(serverId, "TaskBoard.lists", (p) => call(p, "GET", `${board(boardId)}/lists?filter=open`)).pipe(
          Effect.flatMap(decode(Schema.Array(List)))
        ),
      labels: (serverId: string, boardId: string) =>
        as(serverId, "TaskBoard.labels", (p) => call(p, "GET", `${board(boardId)}/labels`)).pipe(
          Effect.flatMap(decode(Schema.Array(Label))),
          Effect.map((labels) => labels.map((l) => ({ id: l.id, name: l.name ?? "", color: l.color })))
        ),
      createList: (serverId: string, boardId: string, name: string) =>
        as(serverId, "TaskBoard.createList", (p) => call(p, "POST", `${board(boardId)}/lists`, { name, pos: "bottom" })).pipe(
          Effect.flatMap(decode(List))
        ),
      createLabel: (serverId: string, boardId: string, name: string) =>
        as(serverId, "TaskBoard.createLabel", (p) => call(p, "POST", `${board(boardId)}/labels`, { name, color: null })).pipe(
          Effect.flatMap(decode(Label)),
          Effect.map((l) => ({ id: l.id, name: l.name ?? "", color: l.color }))
        ),
      createCard: (serverId: string, card: NewCard) =>
        as(serverId, "TaskBoard.createCard", (p) =>
          call(p, "POST", "/1/cards", { idList: card.idList, name: card.name, desc: card.desc, idLabels: [...card.idLabels], pos: "bottom" })).pipe(
          Effect.flatMap(decode(Card))
        ),
      cards: (serverId: string, boardId: string) =>
        as(serverId, "TaskBoard.cards", (p) => call(p, "GET", `${board(boardId)}/cards`)).pipe(
          Effect.flatMap(decode(Schema.Array(ListedCard)))
        ),
      attachUrl: (serverId: string, cardId: string, url: string) =>
        as(serverId, "TaskBoard.attachUrl", (p) => call(p, "POST", `/1/cards/${encodeURIComponent(cardId)}/attachments`, { url })).pipe(
          Effect.flatMap(decode(Attachment))
        )
    }
  })
