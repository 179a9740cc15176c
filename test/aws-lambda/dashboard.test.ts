/**
 * Issue 29, point 2 (Lambda): the dashboard handler on a function URL is public unless something
 * guards it, so it refuses to be created without a token unless told the URL uses IAM auth (and
 * then refuses events AWS did not authenticate); it answers the domain AWS reports for the request
 * and refuses any other Host. Through the real SDK client and the loopback Invoke API.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import {
  createDashboardUrlHandler,
  type DashboardUrlEvent,
  type DashboardUrlHandler
} from "../../adapters/aws-lambda/dashboardHandler.js"
import { createClient } from "../../src/client.js"
import { startLambdaInvokeServer, type LambdaInvokeServer } from "../support/lambdaInvokeServer.js"
import { flushTestDb, testRedisUrl } from "../support/redis.js"
import { invoke } from "./invoke.js"

const domain = "abc123.lambda-url.eu-west-1.on.aws"
const iamCaller = {
  accessKey: "AKIAEXAMPLE",
  accountId: "123456789012",
  callerId: "AIDAEXAMPLE",
  userArn: "arn:aws:iam::123456789012:user/ops",
  userId: "AIDAEXAMPLE"
}
let server: LambdaInvokeServer
const handlers: Record<string, DashboardUrlHandler> = {}

beforeAll(async () => {
  await flushTestDb()
  const client = createClient({ url: testRedisUrl() })
  await client.enqueue("invoice:send", { customer: "private@example.com" }, { queue: "billing" })
  await client.close()
  handlers.iam = createDashboardUrlHandler({ redis: testRedisUrl(), authType: "AWS_IAM" })
  handlers.token = createDashboardUrlHandler({ redis: testRedisUrl(), token: "url-token" })
  server = await startLambdaInvokeServer(
    Object.fromEntries(
      Object.entries(handlers).map(([name, h]) => [name, { handler: (e: unknown) => h(e as DashboardUrlEvent) }])
    )
  )
}, 30_000)
afterAll(async () => {
  await server?.close()
  for (const h of Object.values(handlers)) await h.close()
})

const event = (
  rawPath: string,
  over: { host?: string; headers?: Record<string, string>; iam?: boolean } = {}
): DashboardUrlEvent => ({
  version: "2.0",
  rawPath,
  headers: { host: over.host ?? domain, ...over.headers },
  requestContext: {
    http: { method: "GET" },
    domainName: domain,
    ...(over.iam ? { authorizer: { iam: iamCaller } } : {})
  }
})
const call = async (name: string, e: DashboardUrlEvent) => {
  const r = await invoke(server.client(), name, e)
  expect(r.functionError).toBeUndefined()
  const res = r.payload as { statusCode: number; body: string }
  return { status: res.statusCode, body: res.body }
}

describe("createDashboardUrlHandler", () => {
  it("refuses to be created without a token unless authType is AWS_IAM, saying why and what to do", () => {
    const unset: string | undefined = process.env.EFFECT_ASYNQ_TEST_UNSET_DASH_TOKEN
    for (const options of [{}, { redis: testRedisUrl() }, { token: unset }, { allowActions: true }]) {
      let thrown: unknown
      try {
        createDashboardUrlHandler(options as { token?: string })
      } catch (e) {
        thrown = e
      }
      expect(thrown).toMatchObject({ _tag: "InvalidArgument", field: "token" })
      expect((thrown as Error).message).toBe(
        'createDashboardUrlHandler: no token: on a function URL anyone could read every queue and payload; pass token (is its environment variable set?), or authType: "AWS_IAM" when the URL uses IAM auth'
      )
    }
    expect(() => createDashboardUrlHandler({ authType: "NONE" as "AWS_IAM" })).toThrow(
      'authType must be "AWS_IAM" or left out, got "NONE"'
    )
  })

  it('authType "AWS_IAM": an event AWS authenticated (requestContext.authorizer.iam) is served; one without it is refused (403) and reads nothing', async () => {
    const served = await call("iam", event("/api/queues", { iam: true }))
    expect(served.status).toBe(200)
    expect((JSON.parse(served.body) as { queues: Array<{ queue: string }> }).queues.map((q) => q.queue)).toEqual([
      "billing"
    ])
    for (const path of ["/api/queues", "/api/queues/billing/pending_tasks", "/", "/metrics"]) {
      const refused = await call("iam", event(path))
      expect(refused.status, path).toBe(403)
      expect(JSON.parse(refused.body)).toEqual({
        error: {
          code: "IamAuthMissing",
          message:
            'this dashboard is configured with authType "AWS_IAM", but the request carries no IAM caller: set the function URL\'s AuthType to AWS_IAM'
        }
      })
    }
  })

  it("answers the function URL's own domain and refuses another Host (421), even with the token", async () => {
    const auth = { authorization: "Bearer url-token" }
    expect((await call("token", event("/api/queues", { headers: auth }))).status).toBe(200)
    expect((await call("token", event("/api/queues"))).status).toBe(401)
    const other = await call("token", event("/api/queues", { host: "attacker.example", headers: auth }))
    expect(other.status).toBe(421)
    expect(other.body).not.toContain("billing")
    expect((await call("iam", event("/api/queues", { host: "attacker.example", iam: true }))).status).toBe(421)
  })
})
