/**
 * Trello twin: `GET /sandbox/taskboard/1/organizations/:teamId/boards`. Credentials as Trello takes
 * them: `key` and `token` in the query, or `Authorization: OAuth oauth_consumer_key="..",
 * oauth_token=".."`; without them 401 "invalid key" (plain text, like Trello). `filter=open` leaves
 * closed boards out, `fields=name` trims each board to id and name.
 */
import { Effect } from "effect"
import { HttpServerResponse } from "effect/http"
import { sandboxRoute } from "../SandboxRoute.ts"
import { header, json, param, query } from "./Http.ts"
import { TASKBOARD_BOARDS, TASKBOARD_TEAM } from "./Seed.ts"

const boards = Effect.gen(function*() {
  const q = yield* query
  const auth = yield* header("authorization")
  const key = q.get("key") ?? /oauth_consumer_key="([^"]*)"/.exec(auth)?.[1] ?? ""
  const token = q.get("token") ?? /oauth_token="([^"]*)"/.exec(auth)?.[1] ?? ""
  if (key === "") return HttpServerResponse.text("invalid key", { status: 401 })
  if (token === "") return HttpServerResponse.text("unauthorized permission requested", { status: 401 })
  const team = yield* param("teamId")
  if (team !== TASKBOARD_TEAM) return HttpServerResponse.text("model not found", { status: 404 })
  const filter = q.get("filter") ?? "all"
  const fields = q.get("fields") ?? "all"
  const listed = TASKBOARD_BOARDS.filter((b) => filter !== "open" || !b.closed)
  return json(listed.map((b) =>
    fields === "name"
      ? { id: b.id, name: b.name }
      : { id: b.id, name: b.name, closed: b.closed, idOrganization: TASKBOARD_TEAM, url: `https://trello.com/b/${b.id}` }
  ))
})

export const TaskBoardTwin = [
  sandboxRoute("GET", "/sandbox/taskboard/1/organizations/:teamId/boards", boards)
] as const
