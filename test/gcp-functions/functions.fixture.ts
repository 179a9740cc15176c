/** The functions the Functions Framework serves in the tests (configured from the environment). */
import * as functions from "@google-cloud/functions-framework"
import { createEnqueueFunction } from "../../adapters/gcp-functions/enqueueFunction.js"

const redis = { url: process.env.REDIS_URL! }
const secret = process.env.ENQUEUE_SECRET!

functions.http("enqueue", createEnqueueFunction({ auth: { kind: "shared-secret", secret }, redis }))
functions.http("enqueueSigned", createEnqueueFunction({ auth: { kind: "hmac", secret }, redis }))
