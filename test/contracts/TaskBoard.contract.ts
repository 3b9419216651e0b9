/**
 * The TaskBoard contract: the open boards of a paired server, in the board's order; `undefined`
 * for a server with no pairing or a pairing the board no longer accepts (the forms then offer
 * board `-1`). The board writes a shared submission needs: a board's open lists and labels,
 * creating lists, labels, cards and URL attachments, and the failures that will not heal (no
 * pairing, a board, list or card gone, values refused) told apart from those that may. Outages,
 * refused credentials and rate limits belong to the live layer's own tests (test/taskboard/).
 */
import { assert, layer } from "@effect/vitest"
import { Effect } from "effect"
import type { Layer } from "effect"
import type { Board } from "../../src/domain/forms/Form.ts"
import { TaskBoard } from "../../src/services/taskboard/TaskBoard.ts"

export interface TaskBoardFixture<R = never> {
  /** A paired server and its team's open boards. */
  readonly paired: { readonly serverId: string; readonly boards: ReadonlyArray<Board> }
  /** A server paired with a team the board does not know. */
  readonly stalePairing: string
  /** Servers without a pairing. */
  readonly unpaired: ReadonlyArray<string>
  /** Deletes a board (of the paired team) behind the layer's back, as its owner would in Trello. */
  readonly deleteBoard: (boardId: string) => Effect.Effect<void, never, R>
}

// The sandbox team's seeded boards, lists and labels (src/sandbox/taskboard/State.ts), written out.
const ROADMAP = "5f1a0000000000000000b001"
const APPLICATIONS = "5f1a0000000000000000b002"
const TODO = "5f1a0000000000000000c001"
const APPLICATIONS_LIST = "5f1a0000000000000000c101"
const BUG = "5f1a0000000000000000d001"
const URGENT = "5f1a0000000000000000d101"
const UNKNOWN = "5f1a00000000000000000bad"

const failed = <A, R>(effect: Effect.Effect<A, { readonly reason: string; readonly retryable: boolean }, R>) =>
  Effect.map(Effect.flip(effect), (e) => [e.reason, e.retryable] as const)

export const taskBoardContract = <E, R>(name: string, boardLayer: Layer.Layer<TaskBoard | R, E>, fixture: TaskBoardFixture<R>) =>
  layer(boardLayer, { excludeTestServices: true })(`TaskBoard contract (${name})`, (it) => {
    it.effect("a paired server lists its team's open boards, in order, as id and name only", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        assert.deepStrictEqual(yield* board.boards(fixture.paired.serverId), fixture.paired.boards)
        // Asked again: the same answer.
        assert.deepStrictEqual(yield* board.boards(fixture.paired.serverId), fixture.paired.boards)
      }))

    it.effect("a server without a pairing has no boards (undefined)", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        for (const serverId of fixture.unpaired) assert.isUndefined(yield* board.boards(serverId), serverId)
      }))

    it.effect("a pairing the board does not accept counts as none (undefined)", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        assert.isUndefined(yield* board.boards(fixture.stalePairing))
      }))

    it.effect("a board's open lists in order, and its labels (unnamed colour labels as \"\")", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        const server = fixture.paired.serverId
        assert.deepStrictEqual((yield* board.lists(server, ROADMAP)).map((l) => l.name), ["To Do", "Doing", "Done"])
        assert.deepStrictEqual(yield* board.labels(server, ROADMAP), [
          { id: BUG, name: "Bug", color: "red" },
          { id: "5f1a0000000000000000d002", name: "Feature", color: "green" },
          { id: "5f1a0000000000000000d003", name: "", color: "blue" }
        ])
      }))

    it.effect("a created list comes last among the open lists; a created label has no colour", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        const server = fixture.paired.serverId
        const list = yield* board.createList(server, ROADMAP, "Suggestions")
        assert.strictEqual(list.name, "Suggestions")
        assert.deepStrictEqual((yield* board.lists(server, ROADMAP)).at(-1), list)
        const label = yield* board.createLabel(server, ROADMAP, "Priority: high")
        assert.deepStrictEqual(label, { id: label.id, name: "Priority: high", color: null })
        assert.deepInclude(yield* board.labels(server, ROADMAP), label)
      }))

    it.effect("a card: in its list, with its labels, name and a Trello URL; a URL attached to it", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        const server = fixture.paired.serverId
        const card = yield* board.createCard(server, { idList: TODO, name: "Dark mode", desc: "Why: eyes", idLabels: [BUG] })
        assert.deepInclude(card, { name: "Dark mode", idList: TODO, idLabels: [BUG] })
        assert.match(card.url, /^https:\/\/trello\.com\/c\/[A-Za-z0-9]+\/\d+-dark-mode$/)
        assert.match(card.shortUrl, /^https:\/\/trello\.com\/c\/[A-Za-z0-9]+$/)
        assert.deepInclude(yield* board.attachUrl(server, card.id, "https://cdn.example/a.png"), { url: "https://cdn.example/a.png" })
        // Listed on its board with its description, as made (how a lost answer is recognised).
        const listed = (yield* board.cards(server, ROADMAP)).find((c) => c.id === card.id)
        assert.deepStrictEqual(listed, { ...card, desc: "Why: eyes" })
      }))

    it.effect("failures that will not heal: no pairing, a board, list or card unknown, values refused", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        const server = fixture.paired.serverId
        assert.deepStrictEqual(yield* failed(board.lists(fixture.unpaired[0]!, ROADMAP)), ["unpaired", false])
        assert.deepStrictEqual(yield* failed(board.createCard(fixture.unpaired[0]!, { idList: TODO, name: "x", desc: "", idLabels: [] })), ["unpaired", false])
        assert.deepStrictEqual(yield* failed(board.lists(server, UNKNOWN)), ["not_found", false])
        assert.deepStrictEqual(yield* failed(board.labels(server, "not-an-id")), ["invalid", false])
        assert.deepStrictEqual(yield* failed(board.createList(server, ROADMAP, "")), ["invalid", false])
        assert.deepStrictEqual(yield* failed(board.createCard(server, { idList: UNKNOWN, name: "x", desc: "", idLabels: [] })), ["not_found", false])
        assert.deepStrictEqual(yield* failed(board.createCard(server, { idList: TODO, name: "x", desc: "", idLabels: [URGENT] })), ["invalid", false])
        assert.deepStrictEqual(yield* failed(board.attachUrl(server, UNKNOWN, "https://a.io")), ["not_found", false])
        const card = yield* board.createCard(server, { idList: TODO, name: "y", desc: "", idLabels: [] })
        assert.deepStrictEqual(yield* failed(board.attachUrl(server, card.id, "not a url")), ["invalid", false])
      }))

    it.effect("a board deleted in Trello: its lists, labels and cards are not found, for good", () =>
      Effect.gen(function*() {
        const board = yield* TaskBoard
        const server = fixture.paired.serverId
        const card = yield* board.createCard(server, { idList: APPLICATIONS_LIST, name: "z", desc: "", idLabels: [URGENT] })
        yield* fixture.deleteBoard(APPLICATIONS)
        assert.deepStrictEqual(yield* failed(board.lists(server, APPLICATIONS)), ["not_found", false])
        assert.deepStrictEqual(yield* failed(board.cards(server, APPLICATIONS)), ["not_found", false])
        assert.deepStrictEqual(yield* failed(board.createLabel(server, APPLICATIONS, "x")), ["not_found", false])
        assert.deepStrictEqual(yield* failed(board.createCard(server, { idList: APPLICATIONS_LIST, name: "z", desc: "", idLabels: [] })), ["not_found", false])
        assert.deepStrictEqual(yield* failed(board.attachUrl(server, card.id, "https://a.io")), ["not_found", false])
      }))
  })
