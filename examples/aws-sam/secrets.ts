/**
 * Secrets by reference: a function gets the ARN of a Secrets Manager secret (REDIS_URL_SECRET_ARN,
 * ENQUEUE_SECRET_ARN), never the secret, and reads it once at cold start through the AWS
 * Parameters and Secrets Lambda Extension (a layer serving http://localhost:2773, which caches
 * it). Run outside Lambda (tests, local runs) without the ARN variable, the plain variable is read.
 */
export const secretValue = async (arnVariable: string, plainVariable: string): Promise<string | undefined> => {
  const arn = process.env[arnVariable]
  if (!arn) return process.env[plainVariable]
  const port = process.env.PARAMETERS_SECRETS_EXTENSION_HTTP_PORT ?? "2773"
  const res = await fetch(`http://localhost:${port}/secretsmanager/get?secretId=${encodeURIComponent(arn)}`, {
    headers: { "X-Aws-Parameters-Secrets-Token": process.env.AWS_SESSION_TOKEN ?? "" },
    signal: AbortSignal.timeout(3000)
  })
  if (!res.ok) throw new Error(`reading secret ${arn} (${arnVariable}) failed: HTTP ${res.status} ${await res.text()}`)
  const body = (await res.json()) as { readonly SecretString?: string }
  return body.SecretString
}

/** The Redis address: the secret's value (a redis:// or rediss:// URL, password included). */
export const redisUrl = async (): Promise<{ readonly url?: string }> => {
  const url = await secretValue("REDIS_URL_SECRET_ARN", "REDIS_URL")
  return url === undefined ? {} : { url }
}
