/**
 * The task-board twin's state for one build: each board's lists and labels (seeded, then created
 * through the twin), the cards created with their attachments, boards deleted by a test, and each
 * token's rate-limit window. Trello's numbers by default (100 requests per 10 s per token, 300 per
 * key); `TaskBoardTwinConfig` shrinks them for tests.
 */
import { Context, Effect, Layer } from "effect"
import { TASKBOARD_BOARDS } from "../sources/Seed.ts"

export interface TwinList { readonly id: string; name: string; closed: boolean; readonly idBoard: string; readonly pos: number }
export interface TwinLabel { readonly id: string; readonly idBoard: string; name: string; color: string | null }
export interface TwinAttachment { readonly id: string; readonly url: string; readonly name: string; readonly date: string }
export interface TwinCard {
  readonly id: string
  readonly idShort: number
  readonly shortLink: string
  readonly idBoard: string
  readonly idList: string
  readonly idLabels: ReadonlyArray<string>
  readonly name: string
  readonly desc: string
  readonly pos: number
  readonly dateLastActivity: string
  readonly attachments: Array<TwinAttachment>
}

export interface TaskBoardTwinLimits {
  /** Requests per window and token (Trello: 100). */
  readonly tokenLimit: number
  /** Requests per window and API key (Trello: 300). */
  readonly keyLimit: number
  /** Window length (Trello: 10,000 ms), fixed, starting at a token's first request. */
  readonly intervalMs: number
}

export const TaskBoardTwinConfig = Context.Reference<TaskBoardTwinLimits>("gateway/SandboxTaskBoardConfig", {
  defaultValue: () => ({ tokenLimit: 100, keyLimit: 300, intervalMs: 10_000 })
})

/** Seeded lists and labels (ids of Trello's shape: 24 hex digits). The roadmap has a closed list. */
const SEED_LISTS: ReadonlyArray<Omit<TwinList, "pos">> = [
  { id: "5f1a0000000000000000c001", name: "To Do", closed: false, idBoard: TASKBOARD_BOARDS[0]!.id },
  { id: "5f1a0000000000000000c002", name: "Doing", closed: false, idBoard: TASKBOARD_BOARDS[0]!.id },
  { id: "5f1a0000000000000000c003", name: "Old Ideas", closed: true, idBoard: TASKBOARD_BOARDS[0]!.id },
  { id: "5f1a0000000000000000c004", name: "Done", closed: false, idBoard: TASKBOARD_BOARDS[0]!.id },
  { id: "5f1a0000000000000000c101", name: "Applications", closed: false, idBoard: TASKBOARD_BOARDS[1]!.id },
  { id: "5f1a0000000000000000c102", name: "Accepted", closed: false, idBoard: TASKBOARD_BOARDS[1]!.id }
]
const SEED_LABELS: ReadonlyArray<TwinLabel> = [
  { id: "5f1a0000000000000000d001", idBoard: TASKBOARD_BOARDS[0]!.id, name: "Bug", color: "red" },
  { id: "5f1a0000000000000000d002", idBoard: TASKBOARD_BOARDS[0]!.id, name: "Feature", color: "green" },
  // Trello seeds every board with colour labels that have no name.
  { id: "5f1a0000000000000000d003", idBoard: TASKBOARD_BOARDS[0]!.id, name: "", color: "blue" },
  { id: "5f1a0000000000000000d101", idBoard: TASKBOARD_BOARDS[1]!.id, name: "Urgent", color: "orange" }
]

export class TaskBoardTwinStore {
  readonly boards = new Map(TASKBOARD_BOARDS.map((b) => [b.id, { ...b }]))
  /** Positions as Trello spaces them (16384 apart), counted per board. */
  readonly lists: Array<TwinList> = SEED_LISTS.map((l) => ({
    ...l,
    pos: 16384 * (SEED_LISTS.filter((m) => m.idBoard === l.idBoard).indexOf(l) + 1)
  }))
  readonly labels: Array<TwinLabel> = SEED_LABELS.map((l) => ({ ...l }))
  readonly cards: Array<TwinCard> = []
  /** Fixed windows per token and per key: start (ms) and requests counted. */
  readonly windows = new Map<string, { start: number; count: number }>()
  private sequence = 0

  constructor(readonly limits: TaskBoardTwinLimits) {}

  /** A fresh 24-hex-digit id, like Trello's (a timestamp part then a counter). */
  nextId(): string {
    this.sequence += 1
    return `5f1b${this.sequence.toString(16).padStart(20, "0")}`
  }

  nextNumber(): number {
    this.sequence += 1
    return this.sequence
  }

  /** An open board (a deleted one is gone). */
  board(id: string) {
    return this.boards.get(id)
  }

  /** Counts a request in the window of `id` and says how many remain (negative: over the limit). */
  count(id: string, limit: number, now: number): number {
    let window = this.windows.get(id)
    if (window === undefined || now - window.start >= this.limits.intervalMs) {
      window = { start: now, count: 0 }
      this.windows.set(id, window)
    }
    window.count += 1
    return limit - window.count
  }
}

export class TaskBoardState extends Context.Service<TaskBoardState, TaskBoardTwinStore>()("gateway/SandboxTaskBoardState") {
  static readonly layer = Layer.effect(
    TaskBoardState,
    Effect.gen(function*() {
      return new TaskBoardTwinStore(yield* TaskBoardTwinConfig)
    })
  )
}
