/**
 * The parts of the Functions Framework's (Express) request and response the functions use,
 * typed structurally so this package needs no dependency on @google-cloud/functions-framework.
 */
export interface GcfRequest {
  readonly method: string
  readonly headers: Readonly<Record<string, string | ReadonlyArray<string> | undefined>>
  /** The unparsed body (the Functions Framework sets it). */
  readonly rawBody?: Buffer
  readonly body?: unknown
}

export interface GcfResponse {
  status(code: number): GcfResponse
  set(field: string, value: string): GcfResponse
  send(body: string): unknown
}

/** A CloudEvent as the Functions Framework passes it (Pub/Sub: data.message.data is base64). */
export interface GcfCloudEvent {
  readonly id?: string
  readonly type?: string
  readonly source?: string
  readonly data?: unknown
}

export const flatHeaders = (h: GcfRequest["headers"]): Record<string, string | undefined> => {
  const out: Record<string, string | undefined> = {}
  for (const [k, v] of Object.entries(h)) out[k] = v === undefined ? undefined : typeof v === "string" ? v : v.join(",")
  return out
}

export const sendJson = (res: GcfResponse, status: number, headers: Readonly<Record<string, string>>, body: string) => {
  let r = res.status(status)
  for (const [k, v] of Object.entries(headers)) r = r.set(k, v)
  r.send(body)
}

/** Runs the auth check; on failure answers 401 and returns false. */
export const checkAuth = async (
  verify: () => Promise<unknown>,
  res: GcfResponse
): Promise<boolean> => {
  try {
    await verify()
    return true
  } catch (e) {
    const p = e as { _tag?: string; status?: number; code?: string; message?: string }
    if (p._tag !== "HttpProblem") throw e
    sendJson(res, p.status ?? 401, { "content-type": "application/json" }, JSON.stringify({ error: { code: p.code, message: p.message } }))
    return false
  }
}
