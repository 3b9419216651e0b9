import { defineConfig } from "vitest/config"

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
    hookTimeout: 60_000,
    // SQL suites share one PostgreSQL database per run; files use their own ids, so they may run in parallel.
    fileParallelism: true,
    // vitest's default is one worker fewer than the cores: a single worker on a 2-core CI machine, where
    // most files wait on sockets, processes and timers rather than the CPU. TEST_WORKERS overrides.
    maxWorkers: Number(process.env.TEST_WORKERS ?? 2)
  }
})
