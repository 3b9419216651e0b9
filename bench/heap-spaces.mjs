// Preloaded into the bench's gateway (`node --import ./bench/heap-spaces.mjs <start flags> dist/main.mjs`,
// bench/run.mjs): on SIGUSR2 it writes V8's own account of its memory to $BENCH_HEAP_SPACES_FILE, so the
// report can set the heap's spaces against the process's mappings (/proc/<pid>/smaps, bench/memory.mjs)
// without a debug route in the gateway. Nothing runs until the signal: a listener and this module's few
// KiB are all it adds to the process measured. The signal's listener does not keep the process alive.
import { writeFileSync } from "node:fs"
import v8 from "node:v8"

const file = process.env.BENCH_HEAP_SPACES_FILE
const mib = (bytes) => Math.round((bytes / 2 ** 20) * 10) / 10

if (file !== undefined && file !== "") {
  process.on("SIGUSR2", () => {
    const heap = v8.getHeapStatistics()
    const code = v8.getHeapCodeStatistics()
    const usage = process.memoryUsage()
    writeFileSync(file, JSON.stringify({
      // physical: resident pages of the space; used: live (and not yet collected) objects in it.
      spaces: Object.fromEntries(v8.getHeapSpaceStatistics().map((s) => [
        s.space_name.replace(/_space$/, ""),
        { physical: mib(s.physical_space_size), committed: mib(s.space_size), used: mib(s.space_used_size) }
      ])),
      heap: {
        physical: mib(heap.total_physical_size),
        committed: mib(heap.total_heap_size),
        used: mib(heap.used_heap_size),
        limit: mib(heap.heap_size_limit),
        // V8's own malloc (zones of the compilers and parsers, not the JS heap), now and at its peak.
        malloced: mib(heap.malloced_memory),
        peak_malloced: mib(heap.peak_malloced_memory),
        external: mib(heap.external_memory)
      },
      code: { bytecode_and_metadata: mib(code.bytecode_and_metadata_size), code_and_metadata: mib(code.code_and_metadata_size), external_script_source: mib(code.external_script_source_size) },
      usage: { rss: mib(usage.rss), external: mib(usage.external), array_buffers: mib(usage.arrayBuffers) }
    }))
  })
}
