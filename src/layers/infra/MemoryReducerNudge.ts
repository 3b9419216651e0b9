/**
 * Lets V8 13+ (Node 24) give a quiet process's memory back. V8's memory reducer frees the heap's
 * pooled pages only once it judges the young, old and embedder (C++ heap) allocation rates low; V8 13
 * reads an embedder rate of exactly zero — a process that allocates nothing on the C++ heap, as an
 * idle gateway — as the highest rate, so the reducer never runs and only its 100 s watchdog after
 * the last full GC does (any full GC resets that clock). Measured 2026-11-27 (`bench/run.mjs` S7,
 * Node 24.21): 190 MiB resident right after the load and still 190 MiB 60-90 s later; with an empty
 * `vm.Script` compiled every 20 s (one C++-heap object: the rate is no longer zero) 179 right after,
 * 119-120 MiB 10-30 s later. Node 20's V8 (11) floors that rate at 1 byte/ms: nothing to do there.
 * `--trace-memory-reducer --trace-mutator-utilization` show the reducer's decisions.
 */
import { Effect, Layer, Schedule } from "effect"
import type { Duration } from "effect"
import { Script } from "node:vm"

/** V8 13 and later read a zero embedder allocation rate as high (Node 24's V8 is 13.6; Node 20's 11.3). */
export const needsNudge = (v8Version: string = process.versions.v8): boolean => Number(v8Version.split(".")[0]) >= 13

/** One C++-heap allocation: ~4-19 us. */
const compileEmpty = () => {
  void new Script("")
}

export interface NudgeOptions {
  readonly every?: Duration.Input
  readonly v8Version?: string
  readonly nudge?: () => void
}

/** A fiber of the process's scope that nudges every `every` (20 s) where V8 needs it; nothing elsewhere. */
export const MemoryReducerNudge = (options: NudgeOptions = {}): Layer.Layer<never> =>
  needsNudge(options.v8Version)
    ? Layer.effectDiscard(Effect.forkScoped(
      Effect.repeat(Effect.sync(options.nudge ?? compileEmpty), Schedule.spaced(options.every ?? "20 seconds"))
    ))
    : Layer.empty
