/**
 * The Trello twin's answers, in the shapes of Trello's REST reference: a board's lists (filter) and
 * labels, creating lists, labels (both routes), cards (idList, idLabels, name, desc, pos) and URL
 * attachments; the plain-text refusals; what `GET /sandbox/taskboard/cards` and `GET /sandbox` show.
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import { APPLICATIONS, BUG_LABEL, httpCall, ROADMAP, TODO_LIST, trelloCall, twinLayer, URGENT_LABEL } from "./TwinFixtures.ts"

layer(twinLayer(), { excludeTestServices: true })("Trello twin: lists and labels", (it) => {
  it.effect("GET /1/boards/{id}/lists: open lists by position, Trello's list fields; filter all/closed", () =>
    Effect.gen(function*() {
      const open = yield* trelloCall("GET", `/1/boards/${ROADMAP}/lists?filter=open`)
      assert.strictEqual(open.status, 200)
      assert.deepStrictEqual(open.json.map((l: { name: string }) => l.name), ["To Do", "Doing", "Done"])
      assert.deepStrictEqual(open.json[0], {
        id: TODO_LIST, name: "To Do", closed: false, color: null, idBoard: ROADMAP, pos: 16384,
        subscribed: false, softLimit: null, type: null, datasource: { filter: false }
      })
      const all = yield* trelloCall("GET", `/1/boards/${ROADMAP}/lists?filter=all`)
      assert.deepStrictEqual(all.json.map((l: { name: string }) => l.name), ["To Do", "Doing", "Old Ideas", "Done"])
      const closed = yield* trelloCall("GET", `/1/boards/${ROADMAP}/lists?filter=closed`)
      assert.deepStrictEqual(closed.json.map((l: { name: string }) => l.name), ["Old Ideas"])
      assert.strictEqual((yield* trelloCall("GET", `/1/boards/${ROADMAP}/lists?filter=bogus`)).text, "invalid value for filter")
    }))

  it.effect("refusals are Trello's plain text: no key, no token, a malformed id, an unknown board", () =>
    Effect.gen(function*() {
      const noKey = yield* httpCall("GET", `/sandbox/taskboard/1/boards/${ROADMAP}/lists`)
      assert.deepStrictEqual([noKey.status, noKey.text], [401, "invalid key"])
      const noToken = yield* httpCall("GET", `/sandbox/taskboard/1/boards/${ROADMAP}/lists?key=k`)
      assert.deepStrictEqual([noToken.status, noToken.text], [401, "unauthorized permission requested"])
      const bad = yield* trelloCall("GET", "/1/boards/not-an-id/lists")
      assert.deepStrictEqual([bad.status, bad.text], [400, "invalid id"])
      const unknown = yield* trelloCall("GET", "/1/boards/5f1a00000000000000000bad/lists")
      assert.deepStrictEqual([unknown.status, unknown.text], [404, "The requested resource was not found."])
      // The OAuth header form is accepted as well as the query.
      const oauth = yield* httpCall("GET", `/sandbox/taskboard/1/boards/${ROADMAP}/labels`, undefined, {
        authorization: `OAuth oauth_consumer_key="k", oauth_token="t"`
      })
      assert.strictEqual(oauth.status, 200)
    }))

  it.effect("POST /1/boards/{id}/lists creates a list (top by default); GET /sandbox lists it", () =>
    Effect.gen(function*() {
      const created = yield* trelloCall("POST", `/1/boards/${APPLICATIONS}/lists`, { name: "Shortlist" })
      assert.strictEqual(created.status, 200)
      assert.match(created.json.id, /^[0-9a-f]{24}$/)
      assert.deepInclude(created.json, { name: "Shortlist", closed: false, idBoard: APPLICATIONS, pos: 8192 })
      const lists = yield* trelloCall("GET", `/1/boards/${APPLICATIONS}/lists`)
      assert.deepStrictEqual(lists.json.map((l: { name: string }) => l.name), ["Shortlist", "Applications", "Accepted"])
      assert.strictEqual((yield* trelloCall("POST", `/1/boards/${APPLICATIONS}/lists`, { name: "" })).text, "invalid value for name")
      const index = yield* httpCall("GET", "/sandbox")
      const board = index.json.taskboard.boards.find((b: { id: string }) => b.id === APPLICATIONS)
      assert.deepStrictEqual(board.lists.map((l: { name: string }) => l.name), ["Shortlist", "Applications", "Accepted"])
      assert.deepStrictEqual(board.labels, [{ id: URGENT_LABEL, name: "Urgent", color: "orange" }])
    }))

  it.effect("labels: GET with Trello's fields and uses; created by POST /1/boards/{id}/labels and POST /1/labels", () =>
    Effect.gen(function*() {
      const labels = yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`)
      assert.deepStrictEqual(labels.json[0], { id: BUG_LABEL, idBoard: ROADMAP, name: "Bug", color: "red", uses: 0 })
      const one = yield* trelloCall("POST", `/1/boards/${ROADMAP}/labels`, { name: "Priority: high", color: "null" })
      assert.deepInclude(one.json, { idBoard: ROADMAP, name: "Priority: high", color: null, uses: 0 })
      const two = yield* trelloCall("POST", "/1/labels", { idBoard: ROADMAP, name: "Docs", color: "sky" })
      assert.deepInclude(two.json, { idBoard: ROADMAP, name: "Docs", color: "sky" })
      assert.strictEqual((yield* trelloCall("POST", "/1/labels", { idBoard: ROADMAP, name: "X", color: "mauve" })).text, "invalid value for color")
      assert.strictEqual((yield* trelloCall("POST", "/1/labels", { name: "X", color: "red" })).text, "invalid id")
      const after = yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`)
      assert.includeMembers(after.json.map((l: { name: string }) => l.name), ["Priority: high", "Docs"])
      const index = yield* httpCall("GET", "/sandbox")
      const roadmap = index.json.taskboard.boards.find((b: { id: string }) => b.id === ROADMAP)
      assert.includeDeepMembers(roadmap.labels, [{ id: two.json.id, name: "Docs", color: "sky" }])
    }))
})

layer(twinLayer(), { excludeTestServices: true })("Trello twin: cards and attachments", (it) => {
  it.effect("POST /1/cards answers Trello's card; GET /sandbox/taskboard/cards shows it with its attachments", () =>
    Effect.gen(function*() {
      const card = yield* trelloCall("POST", "/1/cards", { idList: TODO_LIST, name: "Add dark mode", desc: "Why: eyes", idLabels: [BUG_LABEL], pos: "top" })
      assert.strictEqual(card.status, 200)
      assert.deepInclude(card.json, { name: "Add dark mode", desc: "Why: eyes", idList: TODO_LIST, idBoard: ROADMAP, closed: false, idShort: 1 })
      assert.deepStrictEqual(card.json.idLabels, [BUG_LABEL])
      assert.deepStrictEqual(card.json.labels, [{ id: BUG_LABEL, idBoard: ROADMAP, name: "Bug", color: "red" }])
      assert.strictEqual(card.json.shortUrl, `https://trello.com/c/${card.json.shortLink}`)
      assert.strictEqual(card.json.url, `https://trello.com/c/${card.json.shortLink}/1-add-dark-mode`)
      const attachment = yield* trelloCall("POST", `/1/cards/${card.json.id}/attachments`, { url: "https://example.com/a.png" })
      assert.deepInclude(attachment.json, { url: "https://example.com/a.png", name: "https://example.com/a.png", isUpload: false })
      // idLabels as Trello's comma-separated query form.
      const second = yield* trelloCall("POST", `/1/cards?idList=${TODO_LIST}&name=Second&idLabels=${BUG_LABEL}`)
      assert.deepStrictEqual(second.json.idLabels, [BUG_LABEL])
      const seen = yield* httpCall("GET", `/sandbox/taskboard/cards?board_id=${ROADMAP}`)
      assert.deepStrictEqual(seen.json.cards.map((c: { name: string; desc: string; idList: string; idLabels: Array<string>; attachments: Array<{ url: string }> }) => ({
        name: c.name, desc: c.desc, idList: c.idList, idLabels: c.idLabels, attachments: c.attachments.map((a) => a.url)
      })), [
        { name: "Add dark mode", desc: "Why: eyes", idList: TODO_LIST, idLabels: [BUG_LABEL], attachments: ["https://example.com/a.png"] },
        { name: "Second", desc: "", idList: TODO_LIST, idLabels: [BUG_LABEL], attachments: [] }
      ])
      const labels = yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`)
      assert.strictEqual(labels.json.find((l: { id: string }) => l.id === BUG_LABEL).uses, 2)
      // GET /1/boards/{id}/cards: the board's cards in Trello's card shape, oldest first.
      const listed = yield* trelloCall("GET", `/1/boards/${ROADMAP}/cards`)
      assert.deepStrictEqual(listed.json.map((c: { name: string }) => c.name), ["Add dark mode", "Second"])
      assert.deepStrictEqual(listed.json[0], { ...card.json, badges: { ...card.json.badges, attachments: 1 } })
    }))

  it.effect("a card's list and labels are checked: malformed 400, unknown list 404, another board's label 400, bad URL 400", () =>
    Effect.gen(function*() {
      const before = (yield* httpCall("GET", "/sandbox/taskboard/cards")).json.cards.length
      assert.strictEqual((yield* trelloCall("POST", "/1/cards", { name: "x" })).text, "invalid value for idList")
      assert.strictEqual((yield* trelloCall("POST", "/1/cards", { idList: "5f1a00000000000000000bad", name: "x" })).status, 404)
      assert.strictEqual((yield* trelloCall("POST", "/1/cards", { idList: TODO_LIST, name: "x", idLabels: [URGENT_LABEL] })).text, "invalid value for idLabels")
      const card = yield* trelloCall("POST", "/1/cards", { idList: TODO_LIST, name: "y" })
      assert.strictEqual((yield* trelloCall("POST", `/1/cards/${card.json.id}/attachments`, { url: "not a url" })).text, "invalid value for url")
      assert.strictEqual((yield* trelloCall("POST", "/1/cards/5f1a00000000000000000bad/attachments", { url: "https://x.io" })).status, 404)
      const names = (yield* httpCall("GET", "/sandbox/taskboard/cards")).json.cards.map((c: { name: string }) => c.name)
      assert.deepStrictEqual(names.slice(before), ["y"], "only the valid card was created")
    }))

  it.effect("faults by route name after /sandbox/taskboard: a 401 on POST /1/cards creates nothing; then it works", () =>
    Effect.gen(function*() {
      const fault = yield* httpCall("POST", "/sandbox/faults", { route: "POST /1/cards", kind: "401", count: 1 })
      assert.strictEqual(fault.status, 200)
      const before = (yield* httpCall("GET", "/sandbox/taskboard/cards")).json.cards.length
      const refused = yield* trelloCall("POST", "/1/cards", { idList: TODO_LIST, name: "faulted" })
      assert.deepStrictEqual([refused.status, refused.text], [401, "invalid token"], "Trello's plain-text refusal")
      assert.strictEqual((yield* httpCall("GET", "/sandbox/taskboard/cards")).json.cards.length, before)
      yield* httpCall("POST", "/sandbox/faults", { route: "GET /1/boards/{id}/lists", kind: "500", count: 1 })
      assert.strictEqual((yield* trelloCall("GET", `/1/boards/${ROADMAP}/lists`)).status, 500)
      yield* httpCall("POST", "/sandbox/faults", { route: "GET /1/boards/{id}/labels", kind: "429", retry_after: 2 })
      const limited = yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`)
      assert.deepStrictEqual([limited.status, limited.json, limited.headers.get("retry-after")], [429, { error: "API_TOKEN_LIMIT_EXCEEDED", message: "Rate limit exceeded" }, "2"])
      assert.strictEqual((yield* trelloCall("GET", `/1/boards/${ROADMAP}/lists`)).status, 200)
      assert.strictEqual((yield* trelloCall("POST", "/1/cards", { idList: TODO_LIST, name: "after" })).status, 200)
      const stats = yield* httpCall("GET", "/sandbox/stats")
      assert.isAtLeast(stats.json.calls["POST /1/cards"], 2)
    }))

  it.effect("a deleted board: its lists, labels and cards answer 404, and it leaves the listings", () =>
    Effect.gen(function*() {
      const card = yield* trelloCall("POST", "/1/cards", { idList: "5f1a0000000000000000c101", name: "z" })
      assert.strictEqual((yield* httpCall("DELETE", `/sandbox/taskboard/boards/${APPLICATIONS}`)).status, 204)
      assert.strictEqual((yield* trelloCall("GET", `/1/boards/${APPLICATIONS}/lists`)).status, 404)
      assert.strictEqual((yield* trelloCall("GET", `/1/boards/${APPLICATIONS}/labels`)).status, 404)
      assert.strictEqual((yield* trelloCall("POST", "/1/cards", { idList: "5f1a0000000000000000c101", name: "z" })).status, 404)
      assert.strictEqual((yield* trelloCall("POST", `/1/cards/${card.json.id}/attachments`, { url: "https://x.io" })).status, 404)
      const boards = yield* trelloCall("GET", "/1/organizations/sandbox-team-1/boards?filter=open&fields=name")
      assert.deepStrictEqual(boards.json.map((b: { id: string }) => b.id), [ROADMAP])
      const index = yield* httpCall("GET", "/sandbox")
      assert.deepStrictEqual(index.json.taskboard.boards.map((b: { id: string }) => b.id), [ROADMAP, "5f1a0000000000000000b003"])
    }))
})

// A window long enough that the seven calls below land in it on a slow, loaded machine; the last
// call waits until it has surely ended.
const INTERVAL_MS = 3000

layer(twinLayer({ tokenLimit: 3, keyLimit: 5, intervalMs: INTERVAL_MS }), { excludeTestServices: true })("Trello twin: rate limits", (it) => {
  it.effect("per token: x-rate-limit-api-token-* headers count down, then 429 API_TOKEN_LIMIT_EXCEEDED until the window ends", () =>
    Effect.gen(function*() {
      const seen: Array<string | null> = []
      for (let i = 0; i < 3; i++) {
        const a = yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`, undefined, "tok-a")
        assert.strictEqual(a.status, 200)
        assert.strictEqual(a.headers.get("x-rate-limit-api-token-max"), "3")
        assert.strictEqual(a.headers.get("x-rate-limit-api-token-interval-ms"), String(INTERVAL_MS))
        seen.push(a.headers.get("x-rate-limit-api-token-remaining"))
      }
      assert.deepStrictEqual(seen, ["2", "1", "0"])
      const limited = yield* trelloCall("POST", "/1/cards", { idList: TODO_LIST, name: "over" }, "tok-a")
      assert.strictEqual(limited.status, 429)
      assert.deepStrictEqual(limited.json, { error: "API_TOKEN_LIMIT_EXCEEDED", message: "Rate limit exceeded" })
      assert.strictEqual(limited.headers.get("x-rate-limit-api-token-remaining"), "0")
      assert.lengthOf((yield* httpCall("GET", "/sandbox/taskboard/cards")).json.cards, 0, "a refused request creates nothing")
      // Another token of the same key still has its own budget, until the key's 5 are spent.
      assert.strictEqual((yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`, undefined, "tok-b")).status, 200)
      const keyOver = yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`, undefined, "tok-c")
      assert.deepStrictEqual([keyOver.status, keyOver.json.error], [429, "API_KEY_LIMIT_EXCEEDED"])
      yield* Effect.sleep(`${INTERVAL_MS + 50} millis`)
      assert.strictEqual((yield* trelloCall("GET", `/1/boards/${ROADMAP}/labels`, undefined, "tok-a")).status, 200)
    }))
})
