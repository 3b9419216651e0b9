/** The signed-in user of a request: what every layer that acts for a user is given. */
import { Context } from "effect"
import type { UserId } from "../infra/Ids.ts"

/** The signed-in user, as the Authorization middleware resolved the access token. */
export interface Principal {
  readonly userId: UserId
  /** The sign-in (token family) the access token belongs to. */
  readonly familyId: string
  readonly accessExpiresAt: Date
}
export class CurrentPrincipal extends Context.Service<CurrentPrincipal, Principal>()("gateway/CurrentPrincipal") {}
