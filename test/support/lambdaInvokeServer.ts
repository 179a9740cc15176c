/**
 * A Lambda Invoke API endpoint on loopback, so tests can drive the real `@aws-sdk/client-lambda`
 * client: `POST /2015-03-31/functions/{name}/invocations` with `X-Amz-Invocation-Type`
 * RequestResponse (200 + the function's result, or 200 + `X-Amz-Function-Error: Unhandled` and
 * `{ errorType, errorMessage }` when it throws), Event (202 at once, the function runs in the
 * background) or DryRun (204). An unknown function gets 404 ResourceNotFoundException.
 * Functions run in this process with a context whose getRemainingTimeInMillis counts down from
 * the function's timeout.
 */
import { randomUUID } from "node:crypto"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import type { AddressInfo } from "node:net"
import { LambdaClient } from "@aws-sdk/client-lambda"
import type { LambdaContext } from "../../adapters/aws-lambda/types.js"

export type LambdaFn = (event: unknown, context: LambdaContext) => Promise<unknown>

export interface FunctionDef {
  readonly handler: LambdaFn
  /** The function's configured timeout (default 30 000 ms). */
  readonly timeoutMs?: number
  /**
   * How the Invoke API answers for this function instead of running it: "throttle" answers 429
   * TooManyRequestsException (reserved concurrency exhausted), "never-answer" accepts the request
   * and never responds. The call is still recorded in `invocations`.
   */
  readonly respond?: "throttle" | "never-answer"
}

export interface Invocation {
  readonly functionName: string
  readonly invocationType: string
  readonly payload: unknown
}

export interface LambdaInvokeServer {
  readonly endpoint: string
  /** Every accepted invocation, in arrival order. */
  readonly invocations: Array<Invocation>
  /** A real SDK client pointed at this endpoint. */
  readonly client: () => LambdaClient
  /** Waits until every Event invocation started so far has finished. */
  readonly settled: () => Promise<void>
  readonly define: (name: string, def: FunctionDef) => void
  readonly close: () => Promise<void>
}

const readBody = (req: IncomingMessage) =>
  new Promise<Buffer>((resolve, reject) => {
    const chunks: Array<Buffer> = []
    req.on("data", (c: Buffer) => chunks.push(c))
    req.on("end", () => resolve(Buffer.concat(chunks)))
    req.on("error", reject)
  })

const send = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
  res.writeHead(status, { "content-type": "application/json", "x-amzn-requestid": randomUUID(), ...headers })
  res.end(body)
}

export const startLambdaInvokeServer = async (
  functions: Record<string, FunctionDef> = {}
): Promise<LambdaInvokeServer> => {
  const defs = new Map(Object.entries(functions))
  const invocations: Array<Invocation> = []
  const background = new Set<Promise<unknown>>()

  const run = (name: string, def: FunctionDef, payload: unknown) => {
    const deadline = Date.now() + (def.timeoutMs ?? 30_000)
    const context: LambdaContext = {
      functionName: name,
      awsRequestId: randomUUID(),
      getRemainingTimeInMillis: () => Math.max(0, deadline - Date.now())
    }
    return def.handler(payload, context)
  }

  const server: Server = createServer(async (req, res) => {
    const m = /^\/2015-03-31\/functions\/([^/]+)\/invocations$/.exec((req.url ?? "").split("?")[0]!)
    if (req.method !== "POST" || !m)
      return send(res, 404, JSON.stringify({ message: `no route ${req.method} ${req.url}` }), {
        "x-amzn-errortype": "UnknownOperationException"
      })
    const name = decodeURIComponent(m[1]!)
    const def = defs.get(name)
    if (!def)
      return send(
        res,
        404,
        JSON.stringify({
          Type: "User",
          message: `Function not found: arn:aws:lambda:us-east-1:000000000000:function:${name}`
        }),
        {
          "x-amzn-errortype": "ResourceNotFoundException"
        }
      )
    const raw = (await readBody(req)).toString("utf8")
    const payload: unknown = raw === "" ? {} : JSON.parse(raw)
    const invocationType = String(req.headers["x-amz-invocation-type"] ?? "RequestResponse")
    invocations.push({ functionName: name, invocationType, payload })
    if (def.respond === "never-answer") return
    if (def.respond === "throttle")
      return send(
        res,
        429,
        JSON.stringify({
          Reason: "ReservedFunctionConcurrentInvocationLimitExceeded",
          Type: "User",
          message: "Rate Exceeded."
        }),
        {
          "x-amzn-errortype": "TooManyRequestsException"
        }
      )
    if (invocationType === "DryRun") return send(res, 204, "")
    if (invocationType === "Event") {
      const p = run(name, def, payload).catch(() => undefined)
      background.add(p)
      void p.finally(() => background.delete(p))
      return send(res, 202, "")
    }
    try {
      const result = await run(name, def, payload)
      send(res, 200, result === undefined ? "null" : JSON.stringify(result), { "x-amz-executed-version": "$LATEST" })
    } catch (e) {
      const err = e instanceof Error ? e : new Error(String(e))
      send(res, 200, JSON.stringify({ errorType: err.name, errorMessage: err.message, trace: [] }), {
        "x-amz-executed-version": "$LATEST",
        "x-amz-function-error": "Unhandled"
      })
    }
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`
  const clients: Array<LambdaClient> = []
  return {
    endpoint,
    invocations,
    client: () => {
      const c = new LambdaClient({
        endpoint,
        region: "us-east-1",
        credentials: { accessKeyId: "test", secretAccessKey: "test" },
        maxAttempts: 1
      })
      clients.push(c)
      return c
    },
    settled: async () => {
      while (background.size > 0) await Promise.all([...background])
    },
    define: (name, def) => void defs.set(name, def),
    close: async () => {
      for (const c of clients) c.destroy()
      server.closeAllConnections()
      await new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}
