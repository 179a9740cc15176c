import * as Data from "effect/Data"

/**
 * A request the HTTP adapters refuse or could not serve: the status code, a stable machine code
 * and a message that says what was wrong, sent back as `{ "error": { code, message } }`.
 */
export class HttpProblem extends Data.TaggedError("HttpProblem")<{
  readonly status: number
  readonly code: string
  readonly message: string
}> {}

export const badRequest = (message: string, code = "bad_request") => new HttpProblem({ status: 400, code, message })
export const unauthorized = (message: string) => new HttpProblem({ status: 401, code: "unauthorized", message })

/** A minimal HTTP response the Lambda and Cloud Functions adapters both translate. */
export interface JsonResponse {
  readonly status: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}

export const jsonResponse = (
  status: number,
  value: unknown,
  headers: Readonly<Record<string, string>> = {}
): JsonResponse => ({
  status,
  headers: { "content-type": "application/json", ...headers },
  body: JSON.stringify(value)
})

export const problemResponse = (p: HttpProblem): JsonResponse =>
  jsonResponse(p.status, { error: { code: p.code, message: p.message } }, p.status === 405 ? { allow: "POST" } : {})

/**
 * Redis could not be reached or failed. The answer never names the Redis address (the caller may be
 * anyone); the cause goes to the function's log instead, through `log` (default console.error).
 */
export const backendUnavailable = (
  endpoint: string,
  cause: unknown,
  log: (line: string) => void = (l) => console.error(l)
): JsonResponse => {
  log(
    JSON.stringify({
      msg: `effect-asynq ${endpoint}: queue backend unavailable`,
      error: cause instanceof Error ? cause.message : String(cause)
    })
  )
  return jsonResponse(503, {
    error: { code: "backend_unavailable", message: "queue backend unavailable; try again later" }
  })
}
