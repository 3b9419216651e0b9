/**
 * The task board in memory: servers paired with teams, teams with their boards (closed ones are
 * never listed, as Trello's `filter=open`). A server paired with a team the board does not know is
 * unpaired, as the live layer treats a pairing Trello refuses. Default: the sandbox's seed (S1
 * paired with the sandbox team). The board writes run over the twin's own store (the same seeded
 * lists and labels, ids and positions) with the twin's rules, and fail as the live client does on
 * the twin's answers. Held to the live layer's suite: test/contracts/TaskBoard.contract.ts.
 */
import { Effect, Layer } from "effect"
import { SEED } from "../../src/sandbox/Seed.ts"
import type { TrelloBoard } from "../../src/sandbox/sources/Seed.ts"
import { TASKBOARD_BOARDS, TASKBOARD_TEAM } from "../../src/sandbox/sources/Seed.ts"
import { cardUrl } from "../../src/sandbox/taskboard/Shapes.ts"
import { TaskBoardTwinStore } from "../../src/sandbox/taskboard/State.ts"
import { TaskBoard, TaskBoardError } from "../../src/services/taskboard/TaskBoard.ts"

export interface TaskBoardSeed {
  /** Server id → team id. */
  readonly pairings: ReadonlyMap<string, string>
  /** Team id → its boards, open and closed. */
  readonly teams: ReadonlyMap<string, ReadonlyArray<TrelloBoard>>
}

/** The sandbox's pairings (from the guilds' `taskboardTeam`) and its one team. */
export const sandboxTaskBoardSeed: TaskBoardSeed = {
  pairings: new Map(SEED.guilds.flatMap((g) => g.taskboardTeam === null ? [] : [[g.id, g.taskboardTeam] as const])),
  teams: new Map([[TASKBOARD_TEAM, TASKBOARD_BOARDS]])
}

const failure = (reason: TaskBoardError["reason"], status: number, message: string) =>
  Effect.fail(new TaskBoardError({ reason, retryable: false, status, message }))
const invalid = (what: string) => failure("invalid", 400, `Trello refused the request (400: invalid value for ${what}).`)
const gone = failure("not_found", 404, "Trello no longer has the board, list or card (404).")
const isId = (id: string) => /^[0-9a-f]{24}$/.test(id)

/** The memory layer and its store (a test may delete a board from it, as DELETE /sandbox/taskboard/boards/:id does). */
export const taskBoardMemoryWithStore = (seed: TaskBoardSeed, store = new TaskBoardTwinStore({ tokenLimit: 100, keyLimit: 300, intervalMs: 10_000 })) => {
  const paired = <A>(serverId: string, run: () => Effect.Effect<A, TaskBoardError>) =>
    Effect.suspend(() =>
      seed.pairings.has(serverId)
        ? run()
        : Effect.fail(new TaskBoardError({ reason: "unpaired", retryable: false, message: "The server is not paired with a task board." }))
    )
  const board = <A>(boardId: string, run: () => A) =>
    !isId(boardId) ? failure("invalid", 400, "Trello refused the request (400: invalid id).") : store.board(boardId) === undefined ? gone : Effect.sync(run)
  const openLists = (boardId: string) => store.lists.filter((l) => l.idBoard === boardId).sort((a, b) => a.pos - b.pos)
  const service = TaskBoard.of({
    boards: (serverId) =>
      Effect.sync(() => {
        const team = seed.pairings.get(serverId)
        const boards = team === undefined ? undefined : seed.teams.get(team)
        return boards?.filter((b) => !b.closed).map((b) => ({ id: b.id, name: b.name }))
      }),
    lists: (serverId, boardId) =>
      paired(serverId, () => board(boardId, () => openLists(boardId).filter((l) => !l.closed).map((l) => ({ id: l.id, name: l.name })))),
    labels: (serverId, boardId) =>
      paired(serverId, () =>
        board(boardId, () => store.labels.filter((l) => l.idBoard === boardId).map((l) => ({ id: l.id, name: l.name, color: l.color })))),
    createList: (serverId, boardId, name) =>
      paired(serverId, () =>
        name === "" ? invalid("name") : board(boardId, () => {
          const lists = openLists(boardId)
          const list = { id: store.nextId(), name, closed: false, idBoard: boardId, pos: lists.length === 0 ? 16384 : lists.at(-1)!.pos + 16384 }
          store.lists.push(list)
          return { id: list.id, name }
        })),
    createLabel: (serverId, boardId, name) =>
      paired(serverId, () =>
        board(boardId, () => {
          const label = { id: store.nextId(), idBoard: boardId, name, color: null }
          store.labels.push(label)
          return { id: label.id, name, color: null }
        })),
    createCard: (serverId, card) =>
      paired(serverId, () => {
        if (!isId(card.idList)) return invalid("idList")
        const list = store.lists.find((l) => l.id === card.idList)
        if (list === undefined || store.board(list.idBoard) === undefined) return gone
        if (card.idLabels.some((id) => !store.labels.some((l) => l.id === id && l.idBoard === list.idBoard))) return invalid("idLabels")
        const created = {
          id: store.nextId(),
          idShort: store.cards.filter((c) => c.idBoard === list.idBoard).length + 1,
          shortLink: `Sb${store.nextNumber().toString(36).padStart(6, "0")}`,
          idBoard: list.idBoard,
          idList: card.idList,
          idLabels: [...new Set(card.idLabels)],
          name: card.name,
          desc: card.desc,
          pos: 16384 * (store.cards.length + 1),
          dateLastActivity: new Date().toISOString(),
          attachments: []
        }
        store.cards.push(created)
        return Effect.succeed({
          id: created.id,
          name: created.name,
          idList: created.idList,
          idLabels: created.idLabels,
          url: cardUrl(created),
          shortUrl: `https://trello.com/c/${created.shortLink}`
        })
      }),
    cards: (serverId, boardId) =>
      paired(serverId, () =>
        board(boardId, () =>
          store.cards.filter((c) => c.idBoard === boardId).map((c) => ({
            id: c.id,
            name: c.name,
            desc: c.desc,
            idList: c.idList,
            idLabels: c.idLabels,
            url: cardUrl(c),
            shortUrl: `https://trello.com/c/${c.shortLink}`
          })))),
    attachUrl: (serverId, cardId, url) =>
      paired(serverId, () => {
        if (!isId(cardId)) return failure("invalid", 400, "Trello refused the request (400: invalid id).")
        const card = store.cards.find((c) => c.id === cardId)
        if (card === undefined || store.board(card.idBoard) === undefined) return gone
        if (!/^https?:\/\/\S+$/i.test(url)) return invalid("url")
        const attachment = { id: store.nextId(), url, name: url, date: new Date().toISOString() }
        card.attachments.push(attachment)
        return Effect.succeed({ id: attachment.id, url })
      })
  })
  return { layer: Layer.succeed(TaskBoard, service), store }
}

export const taskBoardMemory = (seed: TaskBoardSeed): Layer.Layer<TaskBoard> =>
  Layer.unwrap(Effect.sync(() => taskBoardMemoryWithStore(seed).layer))

export const TaskBoardMemory = taskBoardMemory(sandboxTaskBoardSeed)

/** For fakes that only list boards: every board write fails as for a server without a pairing. */
const unpaired = () => Effect.fail(new TaskBoardError({ reason: "unpaired", retryable: false, message: "The server is not paired with a task board." }))
export const boardWritesUnpaired = {
  lists: unpaired,
  labels: unpaired,
  createList: unpaired,
  createLabel: unpaired,
  createCard: unpaired,
  cards: unpaired,
  attachUrl: unpaired
}
