/**
 * One stub helper for every test that needs a capability but only a few of its members: list the
 * members the test uses; any other effectful member dies with "not stubbed: ChatPlatform.getGuild"
 * when it is called or run, so a test that strays fails loudly and no test lists the members it
 * does not use. Plain (non-Effect) members stay required by the type, as in `Layer.mock`.
 */
import { Effect, Layer } from "effect"
import type { Context } from "effect"

/** "gateway/ChatPlatform" → "ChatPlatform". */
const shortName = (key: string) => key.slice(key.lastIndexOf("/") + 1)

/**
 * A member nobody stubbed: a function returning a dying Effect that is itself that Effect, so it
 * fails the same way whether the service declares it as a method (`getGuild(...)`) or a value
 * (`list`). The trick is `Layer.mock`'s; the message names the member.
 */
const notStubbed = (label: string): unknown => {
  const error = new Error(`not stubbed: ${label}`)
  error.name = "NotStubbed"
  const dead = Effect.die(error)
  const member = () => dead
  Object.assign(member, dead)
  Object.setPrototypeOf(member, Object.getPrototypeOf(dead))
  return member
}

/** The service itself, for fakes that are handed around as values (`Layer.succeed(Tag, fake)`). */
export const stubService = <I, S extends object>(tag: Context.Key<I, S>, implementation: Layer.PartialEffectful<S>): S =>
  new Proxy({ ...(implementation as object) } as S, {
    get(target, prop) {
      if (prop in target) return (target as Record<PropertyKey, unknown>)[prop]
      // Symbols and `then` are probes by the runtime, vitest or `await`, not calls of the service.
      if (typeof prop === "symbol" || prop === "then" || prop === "toJSON") return undefined
      return notStubbed(`${shortName(tag.key)}.${prop}`)
    }
  })

/** A layer providing `tag` with only the listed members; the others die when used. */
export const stub = <I, S extends object>(tag: Context.Key<I, S>, implementation: Layer.PartialEffectful<S>): Layer.Layer<I> =>
  Layer.succeed(tag, stubService(tag, implementation))
