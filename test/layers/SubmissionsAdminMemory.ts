/**
 * The submissions routes' service in the memory app (test/utils/TestApp.ts), which runs no forms:
 * no publication and no submission exists there. The routes' real behaviour is tested on SQL
 * (test/api/SubmissionsHttp*.test.ts).
 */
import { Effect, Layer } from "effect"
import { NotFound, ServiceUnavailable } from "../../src/domain/infra/Errors.ts"
import { SubmissionsAdmin } from "../../src/services/submissions/SubmissionsAdmin.ts"

export const SubmissionsAdminMemory = Layer.succeed(SubmissionsAdmin, SubmissionsAdmin.of({
  publish: () => Effect.fail(ServiceUnavailable.of("The memory app publishes no forms.", 60)),
  publications: () => Effect.succeed({ publications: [] }),
  unpublish: (_access, formId, messageId) => Effect.fail(NotFound.of(`Form ${formId} has no publication with message ${messageId}.`)),
  list: () => Effect.succeed({ submissions: [], page: 1, page_size: 10, page_max: 1 }),
  get: (_access, formId, id) => Effect.fail(NotFound.of(`Submission ${id} does not exist on form ${formId}.`)),
  review: (_access, formId, id) => Effect.fail(NotFound.of(`Submission ${id} does not exist on form ${formId}.`))
}))
