/** Calls a function through the loopback Invoke endpoint with the real SDK client. */
import { InvokeCommand, type LambdaClient } from "@aws-sdk/client-lambda"
import type { HttpApiEvent } from "../../adapters/aws-lambda/types.js"

export interface InvokeResult {
  readonly statusCode: number | undefined
  readonly functionError: string | undefined
  readonly payload: unknown
}

export const invoke = async (client: LambdaClient, functionName: string, event: unknown): Promise<InvokeResult> => {
  const out = await client.send(
    new InvokeCommand({
      FunctionName: functionName,
      InvocationType: "RequestResponse",
      Payload: new TextEncoder().encode(JSON.stringify(event))
    })
  )
  const text = out.Payload === undefined ? "" : new TextDecoder().decode(out.Payload)
  return {
    statusCode: out.StatusCode,
    functionError: out.FunctionError,
    payload: text === "" ? undefined : JSON.parse(text)
  }
}

/** An API Gateway v2 / function URL event for a POST with the given body and headers. */
export const httpEvent = (
  body: string | undefined,
  headers: Record<string, string> = {},
  method = "POST"
): HttpApiEvent => ({
  version: "2.0",
  rawPath: "/enqueue",
  headers: { "content-type": "application/json", ...headers },
  ...(body === undefined ? {} : { body }),
  isBase64Encoded: false,
  requestContext: { http: { method } }
})

export interface HttpResult {
  readonly statusCode: number
  readonly headers: Record<string, string>
  readonly body: string
}

export const json = (r: InvokeResult): { status: number; body: any } => {
  const res = r.payload as HttpResult
  return { status: res.statusCode, body: JSON.parse(res.body) }
}
