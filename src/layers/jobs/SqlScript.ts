/**
 * pg-boss sends some SQL as one text of several statements (its migrations, and every `locked()`
 * block: `BEGIN; SET LOCAL ...; SELECT pg_advisory_xact_lock(...); ...; COMMIT;`), written for the
 * simple query protocol of node-postgres. @effect/sql-pg speaks only the extended protocol, which
 * takes one statement at a time, so such a text is split here and run statement by statement.
 */

const isIdentStart = (c: string) => /[A-Za-z_\u0080-\uffff]/.test(c)
const isIdentPart = (c: string) => /[A-Za-z0-9_$\u0080-\uffff]/.test(c)

/**
 * The top-level statements of a script, in order, without their `;`. Knows quoted strings
 * ('…', E'…', "…"), dollar quotes ($$…$$, $tag$…$tag$: plpgsql bodies), comments (--, nested /* *\/)
 * and positional parameters ($1). Statements holding only whitespace and comments are dropped.
 */
export const splitStatements = (text: string): Array<string> => {
  const statements: Array<string> = []
  let start = 0
  let meaningful = false
  let i = 0
  const n = text.length
  const push = (end: number) => {
    if (meaningful) statements.push(text.slice(start, end).trim())
    start = end + 1
    meaningful = false
  }
  while (i < n) {
    const c = text[i]!
    const next = text[i + 1]
    if (c === "-" && next === "-") {
      const eol = text.indexOf("\n", i)
      i = eol === -1 ? n : eol + 1
    } else if (c === "/" && next === "*") {
      let depth = 1
      i += 2
      while (i < n && depth > 0) {
        if (text[i] === "/" && text[i + 1] === "*") (depth++, i += 2)
        else if (text[i] === "*" && text[i + 1] === "/") (depth--, i += 2)
        else i++
      }
    } else if (c === "'" || c === "\"") {
      // E'…' strings take backslash escapes; a doubled quote is a quote in every kind.
      const backslash = c === "'" && i > 0 && /[eE]/.test(text[i - 1]!) && (i < 2 || !isIdentPart(text[i - 2]!))
      meaningful = true
      i++
      while (i < n) {
        if (backslash && text[i] === "\\") i += 2
        else if (text[i] === c && text[i + 1] === c) i += 2
        else if (text[i] === c) break
        else i++
      }
      i++
    } else if (c === "$" && (next === "$" || (next !== undefined && isIdentStart(next))) && (i === 0 || !isIdentPart(text[i - 1]!))) {
      let j = i + 1
      while (j < n && text[j] !== "$" && isIdentPart(text[j]!)) j++
      if (text[j] === "$") {
        const tag = text.slice(i, j + 1)
        const close = text.indexOf(tag, j + 1)
        meaningful = true
        i = close === -1 ? n : close + tag.length
      } else {
        meaningful = true
        i = j
      }
    } else if (c === ";") {
      push(i)
      i++
    } else {
      if (!/\s/.test(c)) meaningful = true
      i++
    }
  }
  push(n)
  return statements
}

/** The statement without the comments and blanks before its first word. */
const head = (statement: string) => statement.replace(/^(?:\s+|--[^\n]*(?:\n|$)|\/\*[\s\S]*?\*\/)*/, "")

const leadingKeyword = (statement: string) => /^([A-Za-z]+)/.exec(head(statement))?.[1]?.toUpperCase()

/** BEGIN / START TRANSACTION. */
export const isBegin = (statement: string) => {
  const k = leadingKeyword(statement)
  return k === "BEGIN" || (k === "START" && /^START\s+TRANSACTION\b/i.test(head(statement)))
}

/** COMMIT / END. */
export const isCommit = (statement: string) => {
  const k = leadingKeyword(statement)
  return k === "COMMIT" || k === "END"
}

/** Any statement that opens, ends or marks a transaction. */
export const isTransactionControl = (statement: string) => {
  const k = leadingKeyword(statement)
  return isBegin(statement) || isCommit(statement) ||
    k === "ROLLBACK" || k === "ABORT" || k === "SAVEPOINT" || k === "RELEASE" || k === "PREPARE"
}

/**
 * How a script runs: one statement as it is; several as one transaction, as the simple protocol
 * runs them (an explicit `BEGIN … COMMIT` around them is the same thing, so it is dropped).
 * Anything else (a transaction opened and not closed, two transactions) is refused.
 */
export type ScriptPlan =
  | { readonly _tag: "Single"; readonly statement: string }
  | { readonly _tag: "Transaction"; readonly statements: ReadonlyArray<string> }
  | { readonly _tag: "Unsupported"; readonly reason: string }

// pg-boss sends the same few texts again and again (its polls every second): split each once.
const plans = new Map<string, ScriptPlan>()

export const planScript = (text: string): ScriptPlan => {
  // Without a `;` anywhere there is at most one statement: nothing to scan.
  if (!text.includes(";")) return { _tag: "Single", statement: text }
  const known = plans.get(text)
  if (known !== undefined) return known
  const plan = planScriptOnce(text)
  if (plans.size >= 256) plans.clear()
  plans.set(text, plan)
  return plan
}

const planScriptOnce = (text: string): ScriptPlan => {
  const statements = splitStatements(text)
  if (statements.length <= 1) return { _tag: "Single", statement: text }
  const inner = isBegin(statements[0]!) && isCommit(statements[statements.length - 1]!)
    ? statements.slice(1, -1)
    : statements
  const control = inner.find(isTransactionControl)
  return control === undefined
    ? { _tag: "Transaction", statements: inner }
    : { _tag: "Unsupported", reason: `transaction control inside a script: ${control.slice(0, 40)}` }
}
