// Where a benchmarked process's resident memory is: the kernel's account (/proc/<pid>/status and
// /proc/<pid>/smaps, split by mapping) and, for a process started with `--import ./bench/heap-spaces.mjs`,
// V8's own (its heap spaces, code, malloc), so an RSS figure comes with what it is made of.
// (bench/delivery.mjs reads its workers with the same functions.)
import { existsSync, readFileSync, rmSync } from "node:fs"

const sleep = (ms) => new Promise((r) => setTimeout(r, ms))

/** A field of /proc/<pid>/status in MiB (VmRSS: resident now; VmHWM: its peak; RssAnon: private memory; RssFile: mapped files). */
export const statusMiB = (pid, field) => {
  try {
    const line = readFileSync(`/proc/${pid}/status`, "utf8").split("\n").find((l) => l.startsWith(`${field}:`))
    return Math.round(Number(line.split(/\s+/)[1]) / 1024)
  } catch {
    return null
  }
}

/**
 * A process's resident memory by mapping, from /proc/<pid>/smaps (MiB): `malloc` the C heap ([heap]:
 * glibc's main arena), `arenas` the other threads' malloc arenas, `jit` executable anonymous mappings
 * (V8's compiled code), `anon` the other private mappings (V8's heap pages, large malloc blocks such as
 * big ArrayBuffers, thread stacks), `binary` the node executable, `files` other mapped files.
 */
export const memoryParts = (pid) => {
  try {
    const parts = { malloc: 0, arenas: 0, jit: 0, anon: 0, binary: 0, files: 0 }
    const maps = []
    for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
      if (m !== null) {
        const name = m[4]
        const part = name === "[heap]"
          ? "malloc"
          : name === "" || name.startsWith("[")
          ? (m[3].includes("x") ? "jit" : "anon")
          : /\/node$/.test(name)
          ? "binary"
          : "files"
        maps.push({ start: BigInt(`0x${m[1]}`), end: BigInt(`0x${m[2]}`), perm: m[3], part, rss: 0 })
      } else if (line.startsWith("Rss:") && maps.length > 0) maps.at(-1).rss = Number(line.split(/\s+/)[1])
    }
    // Other threads' malloc arenas: glibc reserves each 64 MiB-aligned, 64 MiB, its unused tail PROT_NONE.
    const ARENA = 64n << 20n
    maps.forEach((m, i) => {
      const next = maps[i + 1]
      const arena = m.part === "anon" && m.start % ARENA === 0n &&
        (m.end - m.start === ARENA || (next !== undefined && next.perm === "---p" && next.start === m.end && next.end === m.start + ARENA))
      parts[arena ? "arenas" : m.part] += m.rss
    })
    return Object.fromEntries(Object.entries(parts).map(([k, v]) => [k, Math.round(v / 1024)]))
  } catch {
    return null
  }
}

/**
 * V8's account from a process preloaded with bench/heap-spaces.mjs (env BENCH_HEAP_SPACES_FILE=file):
 * signals it, waits for the file (up to 5 s). Undefined when the process does not answer.
 */
export const heapSpaces = async (child, file) => {
  rmSync(file, { force: true })
  try {
    child.kill("SIGUSR2")
  } catch {
    return undefined
  }
  for (let i = 0; i < 250 && !existsSync(file); i++) await sleep(20)
  for (let i = 0; i < 10; i++) {
    try {
      return JSON.parse(readFileSync(file, "utf8"))
    } catch {
      await sleep(20) // written but not complete yet
    }
  }
  return undefined
}

/**
 * The resident part of V8's regular heap pages (MiB): private anonymous read-write mappings of exactly
 * one V8 page (256 KiB on x64), which is how V8 maps the pages of its spaces, code and large objects
 * aside. Set against the spaces' own resident size it shows the pages V8 holds outside every space:
 * on Node 24 (V8 13.6) a page freed by a full GC or a shrinking new space goes to V8's page pool, stays
 * resident, and is reused only by new space; the pool is emptied only by a memory-reducing GC (the
 * memory reducer's, which waits until V8 judges the young, old and embedder allocation rates low:
 * `--trace-memory-reducer --trace-mutator-utilization`; src/layers/infra/MemoryReducerNudge.ts says
 * why it never did on Node 24). So a Node 24 RSS right after load holds the heap's peak since the last
 * such GC. `--trace-gc` prints the pool as `pooled: N MB`. Node 20's V8 unmaps such pages instead.
 */
export const heapPagesMiB = (pid) => {
  try {
    let kb = 0
    let page = false
    for (const line of readFileSync(`/proc/${pid}/smaps`, "utf8").split("\n")) {
      const m = /^([0-9a-f]+)-([0-9a-f]+) (\S+) \S+ \S+ \S+\s*(.*)$/.exec(line)
      if (m !== null) page = m[3] === "rw-p" && m[4] === "" && BigInt(`0x${m[2]}`) - BigInt(`0x${m[1]}`) === 256n << 10n
      else if (page && line.startsWith("Rss:")) kb += Number(line.split(/\s+/)[1])
    }
    return Math.round(kb / 1024)
  } catch {
    return null
  }
}

/** V8's pool (MiB, estimated): its regular pages' resident size less what its spaces hold on such pages. */
const pooledMiB = (m) => {
  if (m.heapPages === null || m.heapPages === undefined || m.v8 === undefined) return undefined
  const onPages = Object.entries(m.v8.spaces)
    .filter(([name]) => name !== "code" && !name.includes("large_object"))
    .reduce((sum, [, v]) => sum + v.physical, 0)
  return Math.max(0, Math.round(m.heapPages - onPages))
}

/** Everything above at one moment: { rss, peak, private, file, parts, heapPages, v8 }, MiB. */
export const memorySnapshot = async (child, heapFile) => {
  const pid = child.pid
  // The kernel's figures first: they are the ones reported, whatever answering the signal costs.
  const kernel = {
    rss: statusMiB(pid, "VmRSS"),
    peak: statusMiB(pid, "VmHWM"),
    private: statusMiB(pid, "RssAnon"),
    file: statusMiB(pid, "RssFile"),
    parts: memoryParts(pid),
    heapPages: heapPagesMiB(pid)
  }
  const v8 = heapFile === undefined ? undefined : await heapSpaces(child, heapFile)
  return { ...kernel, ...(v8 === undefined ? {} : { v8 }) }
}

/**
 * One line: RSS, then the mappings with V8's heap taken out of `anon` (its spaces' resident pages, code
 * space included; what is left of `anon` is not the JS heap), then the spaces themselves.
 */
export const memoryLine = (m) => {
  if (m.parts === null) return `RSS ${m.rss} MiB`
  const p = m.parts
  const out = [`RSS ${m.rss} MiB (peak ${m.peak})`]
  const jsHeap = m.v8?.heap.physical
  const anonRest = jsHeap === undefined ? undefined : Math.round(p.anon + p.jit - jsHeap)
  out.push(jsHeap === undefined
    ? `anon ${p.anon}, jit ${p.jit}`
    : `V8 heap ${Math.round(jsHeap)} (of anon+jit ${p.anon + p.jit}; other anon ${anonRest}${pooledMiB(m) === undefined ? "" : `, of which V8's page pool ~${pooledMiB(m)}`})`)
  out.push(`malloc ${p.malloc}`, `thread arenas ${p.arenas}`, `node binary ${p.binary}`, `files ${p.files}`)
  if (m.v8 !== undefined) {
    const s = m.v8.spaces
    const sp = Object.entries(s).filter(([, v]) => v.physical >= 0.5).map(([k, v]) => `${k} ${Math.round(v.physical)}/${Math.round(v.used)}`)
    return `${out.join(", ")}; spaces resident/used: ${sp.join(", ")}; V8 malloced ${Math.round(m.v8.heap.malloced)} (peak ${Math.round(m.v8.heap.peak_malloced)}), external ${Math.round(m.v8.usage.external)} (ArrayBuffers ${Math.round(m.v8.usage.array_buffers)})`
  }
  return out.join(", ")
}
