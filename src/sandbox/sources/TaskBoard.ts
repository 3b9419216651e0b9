/**
 * Trello twin: `GET /sandbox/taskboard/1/organizations/:teamId/boards` (route name
 * `"GET /1/organizations/{teamId}/boards"`), with the board routes of src/sandbox/taskboard/.
 * Credentials and rate limits as Trello (taskboard/TrelloHttp.ts): `key` and `token` in the query,
 * or `Authorization: OAuth oauth_consumer_key="..", oauth_token=".."`; without them 401 "invalid
 * key" (plain text, like Trello). `filter=open` leaves closed boards out, `fields=name` trims each
 * board to id and name; a board deleted through the sandbox is gone.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { sandboxRoute } from "../SandboxRoute.ts"
import { TaskBoardInspectRoutes } from "../taskboard/Inspect.ts"
import { TaskBoardState } from "../taskboard/State.ts"
import { trello } from "../taskboard/TrelloHttp.ts"
import { TaskBoardTwinRoutes } from "../taskboard/TwinRoutes.ts"
import { json, param, query } from "./Http.ts"
import { TASKBOARD_TEAM } from "./Seed.ts"

const boards = trello(Effect.gen(function*() {
  const q = yield* query
  const team = yield* param("teamId")
  if (team !== TASKBOARD_TEAM) return HttpServerResponse.text("model not found", { status: 404 })
  const filter = q.get("filter") ?? "all"
  const fields = q.get("fields") ?? "all"
  const listed = [...(yield* TaskBoardState).boards.values()].filter((b) => filter !== "open" || !b.closed)
  return json(listed.map((b) =>
    fields === "name"
      ? { id: b.id, name: b.name }
      : { id: b.id, name: b.name, closed: b.closed, idOrganization: TASKBOARD_TEAM, url: `https://trello.com/b/${b.id}` }
  ))
}))

export const TaskBoardTwin = [
  sandboxRoute("GET", "/sandbox/taskboard/1/organizations/:teamId/boards", boards, { name: "GET /1/organizations/{teamId}/boards" }),
  ...TaskBoardTwinRoutes,
  ...TaskBoardInspectRoutes
] as const
