/**
 * The few AWS Lambda shapes the handlers read (a subset of @types/aws-lambda, which this
 * package does not depend on). Structurally compatible with the real objects.
 */

/** The invocation context the Node.js runtime passes as the second argument. */
export interface LambdaContext {
  readonly functionName: string
  readonly awsRequestId: string
  /** Milliseconds left before the runtime kills the invocation. */
  readonly getRemainingTimeInMillis: () => number
}

/** An API Gateway HTTP API (payload v2) or function URL request. */
export interface HttpApiEvent {
  readonly version?: string
  readonly rawPath?: string
  readonly headers?: Readonly<Record<string, string | undefined>>
  readonly body?: string
  readonly isBase64Encoded?: boolean
  readonly requestContext?: { readonly http?: { readonly method?: string } }
}

/** The response API Gateway v2 / function URLs expect. */
export interface HttpApiResult {
  readonly statusCode: number
  readonly headers: Readonly<Record<string, string>>
  readonly body: string
}
