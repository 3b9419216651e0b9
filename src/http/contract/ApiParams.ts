/** What the contract's groups share: the server path parameters and the errors of every module route. */
import { Forbidden, NotFound, RequestTimeout, ServiceUnavailable } from "../../domain/infra/Errors.ts"
import { BotIdParam, ServerIdParam } from "../../domain/infra/Ids.ts"

export const upstream = [RequestTimeout.wire, ServiceUnavailable.wire] as const
// Path ids are canonical positive decimals: anything else is a 400 naming the parameter.
export const serverParams = { appClientId: BotIdParam, serverId: ServerIdParam }
export const moduleErrors = [NotFound.wire, Forbidden.wire, ...upstream] as const
