/**
 * The task-board twin seen from outside Trello's API: `GET /sandbox/taskboard/cards` (the cards
 * created, each with its list, labels, text and attachments; filter `board_id`), `DELETE
 * /sandbox/taskboard/boards/:id` (the board is deleted: its routes answer 404 from then on), and
 * the boards' lists and labels as they are now, for `GET /sandbox`.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { sandboxRoute } from "../SandboxRoute.ts"
import { json, param, query } from "../sources/Http.ts"
import { cardUrl } from "./Shapes.ts"
import { TaskBoardState, type TaskBoardTwinStore } from "./State.ts"

const cards = sandboxRoute("GET", "/sandbox/taskboard/cards", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const boardId = (yield* query).get("board_id")
  const shown = store.cards.filter((c) => boardId === null || c.idBoard === boardId)
  return json({
    cards: shown.map((c) => ({
      id: c.id,
      idBoard: c.idBoard,
      idList: c.idList,
      idLabels: c.idLabels,
      name: c.name,
      desc: c.desc,
      url: cardUrl(c),
      attachments: c.attachments.map((a) => ({ url: a.url, name: a.name }))
    }))
  })
}))

const deleteBoard = sandboxRoute("DELETE", "/sandbox/taskboard/boards/:id", Effect.gen(function*() {
  const store = yield* TaskBoardState
  const deleted = store.boards.delete(yield* param("id"))
  return deleted ? HttpServerResponse.empty({ status: 204 }) : json({ message: "unknown board" }, 404)
}))

export const TaskBoardInspectRoutes = [cards, deleteBoard] as const

/** Each board (deleted ones left out) with its lists and labels as they are now, created ones included. */
export const taskBoardListing = (store: TaskBoardTwinStore) => ({
  boards: [...store.boards.values()].map((b) => ({
    id: b.id,
    name: b.name,
    closed: b.closed,
    lists: store.lists.filter((l) => l.idBoard === b.id).sort((x, y) => x.pos - y.pos).map((l) => ({ id: l.id, name: l.name, closed: l.closed })),
    labels: store.labels.filter((l) => l.idBoard === b.id).map((l) => ({ id: l.id, name: l.name, color: l.color }))
  })),
  cards: "/sandbox/taskboard/cards"
})
