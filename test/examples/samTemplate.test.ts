/**
 * The SAM template as a platform team reviews it (issue 18), read with a YAML parser that knows
 * CloudFormation's short-form tags: least privilege (no wildcard action or resource, the dispatcher
 * may invoke only the processor), secrets only by reference, a failure destination for every
 * asynchronously invoked function, the endpoints a function in a VPC needs to reach the Lambda and
 * Secrets Manager APIs, an enqueue URL with IAM auth by default, and a Node.js runtime the bundled
 * AWS SDK supports.
 */
import { readFileSync } from "node:fs"
import { join } from "node:path"
import { fileURLToPath } from "node:url"
import { describe, expect, it } from "vitest"
import { parse, type Tags } from "yaml"

const root = fileURLToPath(new URL("../../", import.meta.url))

/** CloudFormation's short forms (!Ref x, !GetAtt a.b, !Sub s, …) as their long forms. */
const cfnTags: Tags = [
  "Ref",
  "GetAtt",
  "Sub",
  "Select",
  "Equals",
  "If",
  "Join",
  "Not",
  "And",
  "Or",
  "Split",
  "FindInMap",
  "GetAZs",
  "ImportValue",
  "Base64",
  "Cidr"
].flatMap((name) => {
  const key = name === "Ref" ? "Ref" : `Fn::${name}`
  return [
    { tag: `!${name}`, resolve: (value: string) => ({ [key]: name === "GetAtt" ? value.split(".") : value }) },
    {
      tag: `!${name}`,
      collection: "seq" as const,
      resolve: (value: unknown) => ({ [key]: (value as { toJSON: () => unknown }).toJSON() })
    }
  ]
})

type Node = Record<string, any>
const template = parse(readFileSync(join(root, "examples/aws-sam/template.yaml"), "utf8"), {
  customTags: cfnTags
}) as Node
const resources = template.Resources as Record<string, Node>
const functions = Object.entries(resources).filter(([, r]) => r.Type === "AWS::Serverless::Function")
const asArray = <T>(v: T | ReadonlyArray<T> | undefined): ReadonlyArray<T> =>
  v === undefined ? [] : Array.isArray(v) ? v : [v as T]

/** Every IAM statement the template writes: function policies and any policy document. */
const statements = (): Array<{ where: string; statement: Node }> => {
  const out: Array<{ where: string; statement: Node }> = []
  for (const [name, fn] of functions)
    for (const policy of asArray<Node | string>(fn.Properties.Policies)) {
      expect(typeof policy, `${name}: only inline statements (a managed policy name could grant anything)`).toBe(
        "object"
      )
      for (const s of asArray<Node>((policy as Node).Statement)) out.push({ where: name, statement: s })
    }
  for (const [name, r] of Object.entries(resources))
    for (const s of asArray<Node>(r.Properties?.PolicyDocument?.Statement)) out.push({ where: name, statement: s })
  return out
}

describe("the SAM template (examples/aws-sam/template.yaml)", () => {
  it("has the four functions, each a nodejs runtime the bundled AWS SDK supports without warning (>= 22)", () => {
    expect(functions.map(([n]) => n).sort()).toEqual([
      "DispatcherFunction",
      "EnqueueFunction",
      "ProcessorFunction",
      "TickFunction"
    ])
    const runtime = String(template.Globals.Function.Runtime)
    const major = Number(/^nodejs(\d+)\.x$/.exec(runtime)?.[1])
    const sdk = JSON.parse(readFileSync(join(root, "node_modules/@aws-sdk/client-lambda/package.json"), "utf8")) as {
      engines: { node: string }
    }
    expect(major).toBeGreaterThanOrEqual(Number(/>=\s*(\d+)/.exec(sdk.engines.node)![1]))
    // The SDK warns below Node 22 that its releases after January 2027 require it.
    expect(major).toBeGreaterThanOrEqual(22)
    for (const [, fn] of functions) expect(fn.Properties.Runtime ?? runtime).toBe(runtime)
  })

  it("grants no wildcard action and no wildcard resource; the dispatcher may invoke only the processor", () => {
    const all = statements()
    expect(all.length).toBeGreaterThan(0)
    for (const { where, statement } of all) {
      for (const action of asArray<string>(statement.Action)) expect(action, `${where}: ${action}`).not.toMatch(/\*/)
      for (const resource of asArray<unknown>(statement.Resource))
        expect(JSON.stringify(resource), where).not.toMatch(/"\*"|:\*"/)
      expect(statement.NotAction, where).toBeUndefined()
      expect(statement.NotResource, where).toBeUndefined()
    }
    const invoke = all.filter(
      ({ where, statement }) =>
        where === "DispatcherFunction" && asArray(statement.Action).includes("lambda:InvokeFunction")
    )
    expect(invoke.map(({ statement }) => statement.Resource)).toEqual([{ "Fn::GetAtt": ["ProcessorFunction", "Arn"] }])
  })

  it("passes secrets only by reference: no secret parameter, no secret or Redis URL in an environment variable", () => {
    for (const [name, p] of Object.entries(template.Parameters as Record<string, Node>)) {
      expect(p.NoEcho, `${name} must not carry a secret`).toBeUndefined()
    }
    const envs = [
      template.Globals.Function.Environment?.Variables ?? {},
      ...functions.map(([, f]) => f.Properties.Environment?.Variables ?? {})
    ] as Array<Record<string, unknown>>
    for (const vars of envs)
      for (const [key, value] of Object.entries(vars)) {
        expect(key).not.toMatch(/^(REDIS_URL|ENQUEUE_SECRET|.*PASSWORD.*)$/)
        expect(JSON.stringify(value)).not.toMatch(/redis:\/\/|rediss:\/\//)
        if (/SECRET/.test(key)) {
          expect(key).toMatch(/_SECRET_ARN$/)
          expect(value).toEqual({ Ref: expect.stringMatching(/SecretArn$/) })
        }
      }
    // Each function that reads a secret may read exactly the secrets it names.
    for (const { statement } of statements().filter(({ statement }) =>
      asArray(statement.Action).includes("secretsmanager:GetSecretValue")
    ))
      for (const r of asArray<Node>(statement.Resource)) expect(r).toEqual({ Ref: expect.stringMatching(/SecretArn$/) })
  })

  it("sends every asynchronously invoked function's failures to an SQS destination, and the schedules' to a dead-letter queue", () => {
    for (const name of ["ProcessorFunction", "DispatcherFunction", "TickFunction"]) {
      const onFailure = resources[name]!.Properties.EventInvokeConfig?.DestinationConfig?.OnFailure
      expect(onFailure, name).toMatchObject({ Type: "SQS" })
      const queue = (onFailure.Destination as Node)["Fn::GetAtt"][0] as string
      expect(resources[queue]?.Type).toBe("AWS::SQS::Queue")
    }
    for (const [name, fn] of functions)
      for (const event of Object.values((fn.Properties.Events ?? {}) as Record<string, Node>)) {
        expect(event.Type, `${name}: the schedules are EventBridge Scheduler's`).toBe("ScheduleV2")
        expect(event.Properties.DeadLetterConfig, name).toMatchObject({ Type: "SQS" })
      }
    expect(resources.ProcessorFunction!.Properties.ReservedConcurrentExecutions).toBeGreaterThan(0)
  })

  it("functions in the VPC reach the Lambda and Secrets Manager APIs through interface endpoints (no NAT needed)", () => {
    expect(template.Globals.Function.VpcConfig).toBeDefined()
    const endpoints = Object.values(resources).filter((r) => r.Type === "AWS::EC2::VPCEndpoint")
    const services = endpoints.map((e) => JSON.stringify(e.Properties.ServiceName))
    expect(services.some((s) => s.endsWith('.lambda"}'))).toBe(true)
    expect(services.some((s) => s.endsWith('.secretsmanager"}'))).toBe(true)
    for (const e of endpoints)
      expect(e.Properties).toMatchObject({
        VpcEndpointType: "Interface",
        PrivateDnsEnabled: true,
        SubnetIds: { Ref: "SubnetIds" }
      })
  })

  it("protects the enqueue URL with IAM auth by default (NONE only by choice, with the HMAC check in the code)", () => {
    expect(resources.EnqueueFunction!.Properties.FunctionUrlConfig.AuthType).toEqual({ Ref: "EnqueueUrlAuthType" })
    expect(template.Parameters.EnqueueUrlAuthType).toMatchObject({
      Default: "AWS_IAM",
      AllowedValues: ["AWS_IAM", "NONE"]
    })
    expect(readFileSync(join(root, "examples/aws-sam/enqueue.ts"), "utf8")).toContain('kind: "hmac"')
  })
})
