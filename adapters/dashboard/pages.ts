/**
 * The dashboard's HTML shell and static assets, served from strings compiled into the package
 * (no CDN, nothing fetched at run time: it works offline). The script is browser/app.ts, bundled
 * at build time into assets/app.generated.ts (browser/embed.mjs); the stylesheet is assets/style.ts.
 * The shell carries the configuration the script needs (read-only or not, base path) as inert
 * JSON; a Content-Security-Policy allows only this origin's script and style. The token form needs
 * no script, and its stylesheet is served without the token (see handler.ts).
 */
import { appJs } from "./assets/app.generated.js"
import { styleCss } from "./assets/style.js"
import type { DashboardConfig } from "./handler.js"

const securityHeaders = {
  "content-security-policy":
    "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'",
  "x-content-type-options": "nosniff",
  "referrer-policy": "no-referrer",
  "cache-control": "no-store"
}

const assets: Record<string, { readonly type: string; readonly body: string }> = {
  "app.js": { type: "text/javascript; charset=utf-8", body: appJs },
  "style.css": { type: "text/css; charset=utf-8", body: styleCss }
}

/** A compiled-in asset by file name (app.js, style.css), or 404. */
export const assetResponse = (name: string): Response => {
  const asset = assets[name]
  if (asset === undefined)
    return new Response("not found", { status: 404, headers: { "content-type": "text/plain; charset=utf-8" } })
  return new Response(asset.body, { status: 200, headers: { ...securityHeaders, "content-type": asset.type } })
}

const escapeHtml = (s: string) => s.replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`)

const htmlPage = (config: DashboardConfig, body: string, status: number): Response => {
  const base = escapeHtml(config.basePath)
  const html = `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>effect-asynq dashboard</title><link rel="icon" href="data:,"><link rel="stylesheet" href="${base}/assets/style.css"></head>
<body>${body}</body></html>`
  return new Response(html, { status, headers: { ...securityHeaders, "content-type": "text/html; charset=utf-8" } })
}

/** The app: its script renders every view from the URL's #fragment. */
export const appPage = (config: DashboardConfig): Response => {
  // "<" escaped so the JSON cannot close the script element.
  const configJson = JSON.stringify({ allowActions: config.allowActions, basePath: config.basePath }).replace(
    /</g,
    "\\u003c"
  )
  return htmlPage(
    config,
    `<header><span class="brand">effect-asynq</span><nav id="nav"></nav><span class="mode${config.allowActions ? " actions" : ""}" data-testid="mode">${config.allowActions ? "actions allowed" : "read-only"}</span></header>
<main id="main"><p class="muted">Loading…</p></main>
<script id="dash-config" type="application/json">${configJson}</script>
<script src="${escapeHtml(config.basePath)}/assets/app.js" defer></script>`,
    200
  )
}

/**
 * The token form (no script: it works under the page's CSP as it is). It POSTs the token to
 * `<base>/login`, so the token never appears in a URL; `wrongToken` says the last one did not match.
 */
export const loginPage = (config: DashboardConfig, status: number, wrongToken: boolean): Response =>
  htmlPage(
    config,
    `<form class="login" method="post" action="${escapeHtml(config.basePath)}/login">
<h1>effect-asynq dashboard</h1>
<p>This dashboard is protected by a token (the <code>--token</code> it was started with, or <code>EFFECT_ASYNQ_DASH_TOKEN</code>).</p>
${wrongToken ? '<p class="notice error" role="alert" data-testid="login-error">Wrong token: it is not the one this dashboard was started with. Try again.</p>\n' : ""}<label for="token">Token</label><input id="token" name="token" type="password" autocomplete="current-password" required autofocus>
<button type="submit">Open the dashboard</button></form>`,
    status
  )
