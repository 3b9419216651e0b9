import { defineConfig } from "vitest/config"
import { DurationSequencer } from "./test/setup/DurationSequencer.ts"

// Node 20 lacks Map.groupBy, which vitest 5's reporter calls when it prints failures.
if (typeof (Map as { groupBy?: unknown }).groupBy !== "function") {
  Object.defineProperty(Map, "groupBy", {
    value: <K, V>(items: Iterable<V>, key: (item: V, index: number) => K) => {
      const map = new Map<K, Array<V>>()
      let i = 0
      for (const item of items) {
        const k = key(item, i++)
        const group = map.get(k)
        if (group) group.push(item)
        else map.set(k, [item])
      }
      return map
    }
  })
}

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    // One production bundle per run for the files that start it (test/setup/SharedBundle.ts).
    globalSetup: ["test/setup/BuildOnce.ts"],
    hookTimeout: 60_000,
    // SQL suites share one PostgreSQL database per run; files use their own ids, so they may run in parallel.
    fileParallelism: true,
    // vitest's default is one worker fewer than the cores: a single worker on a 2-core CI machine, where
    // most files wait on sockets, processes and timers rather than the CPU. Three took 557-616 s where
    // two take 662-672 s, every run passing since the last load failures were fixed (docs/testing.md);
    // TEST_WORKERS overrides.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 3),
    // Files share their worker's module registry (effect, the app's modules, PGlite's WebAssembly are
    // loaded once per worker, not once per file). Node 20: 608 s at load 5-7 (isolated: 824 s quiet,
    // 1,453-2,194 s at load 8-13); Node 24: 1,004 s at load 8-13; all passing. A file must leave no
    // global state behind (env, module-level caches); TEST_ISOLATE=1 brings isolation back to tell.
    isolate: process.env.TEST_ISOLATE === "1",
    // Longest first, from the last run or, on a fresh clone, test/durations.json.
    sequence: { sequencer: DurationSequencer }
  }
})
