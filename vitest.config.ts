import { defineConfig } from "vitest/config"

export default defineConfig({
  test: {
    include: ["test/**/*.test.ts"],
    testTimeout: 30_000,
    hookTimeout: 60_000,
    // SQL suites share one PostgreSQL database per run; files use their own ids, so they may run in parallel.
    fileParallelism: true
  }
})
