/**
 * The Trello twin's board routes under `/sandbox/taskboard` (Trello's paths after it), each named
 * for stats and faults by method and that path: `"POST /1/cards"`, `"GET /1/boards/{id}/lists"`, …
 * Validation answers as Trello's do: 400 plain text `invalid id` / `invalid value for <param>`, 404
 * `The requested resource was not found.` for a board deleted or a list, label or card unknown.
 */
import { Clock, Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { sandboxRoute } from "../SandboxRoute.ts"
import { json, param } from "../sources/Http.ts"
import { attachmentJson, cardJson, labelJson, listJson } from "./Shapes.ts"
import { TaskBoardState, type TaskBoardTwinStore, type TwinList } from "./State.ts"
import { isTrelloId, notFound, params, text, trello } from "./TrelloHttp.ts"

const BASE = "/sandbox/taskboard"
const LABEL_COLORS = ["yellow", "purple", "blue", "red", "green", "orange", "black", "sky", "pink", "lime"]
const invalid = (what: string) => text(`invalid value for ${what}`, 400)

/** `pos`: "top", "bottom" or a positive number, placed among `taken` (Trello's positions). */
const position = (raw: string | undefined, taken: ReadonlyArray<number>, fallback: "top" | "bottom"): number | undefined => {
  const pos = raw ?? fallback
  if (pos === "top") return taken.length === 0 ? 16384 : Math.min(...taken) / 2
  if (pos === "bottom") return taken.length === 0 ? 16384 : Math.max(...taken) + 16384
  const n = Number(pos)
  return Number.isFinite(n) && n > 0 ? n : undefined
}

/** The board named by the path, or the answer to give instead. */
const boardFrom = (store: TaskBoardTwinStore, id: string) =>
  !isTrelloId(id) ? text("invalid id", 400) : store.board(id) === undefined ? notFound() : undefined

const route = <E, R>(method: "GET" | "POST", path: `/1/${string}`, handler: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  sandboxRoute(method, `${BASE}${path}`, trello(handler), { name: `${method} ${path.replace(/:([A-Za-z]+)/g, "{$1}")}` })

const openLists = (store: TaskBoardTwinStore, boardId: string): Array<TwinList> =>
  store.lists.filter((l) => l.idBoard === boardId).sort((a, b) => a.pos - b.pos)

const lists = route("GET", "/1/boards/:id/lists", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const id = yield* param("id")
  const refused = boardFrom(store, id)
  if (refused) return refused
  const filter = (yield* params).get("filter") ?? "open"
  if (!["open", "closed", "all", "none"].includes(filter)) return invalid("filter")
  const shown = openLists(store, id).filter((l) => filter === "all" || (filter === "open" ? !l.closed : filter === "closed" && l.closed))
  return json(shown.map(listJson))
}))

const createList = route("POST", "/1/boards/:id/lists", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const id = yield* param("id")
  const refused = boardFrom(store, id)
  if (refused) return refused
  const p = yield* params
  const name = p.get("name") ?? ""
  if (name === "" || name.length > 16384) return invalid("name")
  const pos = position(p.get("pos"), openLists(store, id).map((l) => l.pos), "top")
  if (pos === undefined) return invalid("pos")
  const list: TwinList = { id: store.nextId(), name, closed: false, idBoard: id, pos }
  store.lists.push(list)
  return json(listJson(list))
}))

const labelsOf = (store: TaskBoardTwinStore, boardId: string) => store.labels.filter((l) => l.idBoard === boardId)
const uses = (store: TaskBoardTwinStore, labelId: string) => store.cards.filter((c) => c.idLabels.includes(labelId)).length

const labels = route("GET", "/1/boards/:id/labels", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const id = yield* param("id")
  return boardFrom(store, id) ?? json(labelsOf(store, id).map((l) => labelJson(l, uses(store, l.id))))
}))

const addLabel = (store: TaskBoardTwinStore, boardId: string, p: Map<string, string>) => {
  const refused = boardFrom(store, boardId)
  if (refused) return refused
  const name = p.get("name")
  if (name === undefined || name.length > 16384) return invalid("name")
  const color = p.get("color")
  if (color === undefined || (color !== "null" && !LABEL_COLORS.includes(color))) return invalid("color")
  const label = { id: store.nextId(), idBoard: boardId, name, color: color === "null" ? null : color }
  store.labels.push(label)
  return json(labelJson(label, 0))
}

const createBoardLabel = route("POST", "/1/boards/:id/labels", Effect.gen(function*() {
  return addLabel(yield* TaskBoardState, yield* param("id"), yield* params)
}))

const createLabel = route("POST", "/1/labels", Effect.gen(function*() {
  const p = yield* params
  return addLabel(yield* TaskBoardState, p.get("idBoard") ?? "", p)
}))

const createCard = route("POST", "/1/cards", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const p = yield* params
  const idList = p.get("idList") ?? ""
  if (!isTrelloId(idList)) return invalid("idList")
  const list = store.lists.find((l) => l.id === idList)
  if (list === undefined || store.board(list.idBoard) === undefined) return notFound()
  const name = p.get("name") ?? ""
  const desc = p.get("desc") ?? ""
  if (name.length > 16384) return invalid("name")
  if (desc.length > 16384) return invalid("desc")
  const idLabels = (p.get("idLabels") ?? "").split(",").filter((id) => id !== "")
  if (idLabels.some((id) => !store.labels.some((l) => l.id === id && l.idBoard === list.idBoard))) return invalid("idLabels")
  const pos = position(p.get("pos"), store.cards.filter((c) => c.idList === idList).map((c) => c.pos), "bottom")
  if (pos === undefined) return invalid("pos")
  const now = new Date(yield* Clock.currentTimeMillis).toISOString()
  const idShort = store.cards.filter((c) => c.idBoard === list.idBoard).length + 1
  const card = {
    id: store.nextId(),
    idShort,
    shortLink: `Sb${store.nextNumber().toString(36).padStart(6, "0")}`,
    idBoard: list.idBoard,
    idList,
    idLabels: [...new Set(idLabels)],
    name,
    desc,
    pos,
    dateLastActivity: now,
    attachments: []
  }
  store.cards.push(card)
  return json(cardJson(card, store.labels))
}))

/** `GET /1/boards/{id}/cards`: the board's cards (Trello's default filter "visible": every card here, none is archived). */
const boardCards = route("GET", "/1/boards/:id/cards", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const id = yield* param("id")
  return boardFrom(store, id) ?? json(store.cards.filter((c) => c.idBoard === id).map((c) => cardJson(c, store.labels)))
}))

const attach = route("POST", "/1/cards/:id/attachments", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const id = yield* param("id")
  if (!isTrelloId(id)) return text("invalid id", 400)
  const card = store.cards.find((c) => c.id === id)
  if (card === undefined || store.board(card.idBoard) === undefined) return notFound()
  const p = yield* params
  const url = p.get("url") ?? ""
  if (!/^https?:\/\/\S+$/i.test(url)) return invalid("url")
  const name = p.get("name") ?? url
  if (name.length > 256) return invalid("name")
  const attachment = { id: store.nextId(), url, name, date: new Date(yield* Clock.currentTimeMillis).toISOString() }
  card.attachments.push(attachment)
  return json(attachmentJson(attachment))
}))

export const TaskBoardTwinRoutes = [lists, createList, labels, createBoardLabel, createLabel, createCard, boardCards, attach] as const
