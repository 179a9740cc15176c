/** The dashboard's stylesheet, served at /assets/style.css (shipped in the package, no CDN). */
export const styleCss = String.raw`
:root { --bg:#f6f7f9; --fg:#1d2330; --muted:#667085; --line:#e3e6ea; --accent:#3457d5; --ok:#1a7f37; --bad:#c62828; --warn:#b26a00; --card:#fff; }
* { box-sizing: border-box; }
body { margin:0; font:14px/1.45 system-ui, -apple-system, "Segoe UI", Roboto, sans-serif; background:var(--bg); color:var(--fg); }
header { display:flex; align-items:center; gap:24px; padding:10px 20px; background:#1d2330; color:#fff; }
header .brand { font-weight:600; letter-spacing:.2px; }
header nav a { color:#c9d3ff; text-decoration:none; margin-right:16px; }
header nav a.active, header nav a:hover { color:#fff; text-decoration:underline; }
header .mode { margin-left:auto; font-size:12px; padding:2px 8px; border-radius:10px; background:#39415a; }
header .mode.actions { background:#8a3d00; }
main { padding:20px; max-width:1400px; margin:0 auto; }
h1 { font-size:20px; margin:0 0 14px; } h2 { font-size:16px; margin:22px 0 10px; }
a { color:var(--accent); }
table { border-collapse:collapse; width:100%; background:var(--card); border:1px solid var(--line); }
th, td { text-align:left; padding:6px 10px; border-bottom:1px solid var(--line); vertical-align:top; }
th { font-weight:600; color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.3px; background:#fafbfc; }
td.num, th.num { text-align:right; font-variant-numeric:tabular-nums; }
td code, .mono { font-family: ui-monospace, SFMono-Regular, Menlo, Consolas, monospace; font-size:12px; }
.preview { max-width:420px; overflow:hidden; text-overflow:ellipsis; white-space:nowrap; display:block; }
.cards { display:flex; flex-wrap:wrap; gap:12px; margin-bottom:16px; }
.card { background:var(--card); border:1px solid var(--line); border-radius:6px; padding:10px 14px; min-width:130px; }
.card .label { color:var(--muted); font-size:12px; } .card .value { font-size:20px; font-weight:600; }
.tabs { display:flex; flex-wrap:wrap; gap:4px; margin:10px 0; }
.tabs a { padding:6px 12px; border:1px solid var(--line); border-radius:6px 6px 0 0; background:#eef0f4; text-decoration:none; color:var(--fg); }
.tabs a.active { background:var(--card); border-bottom-color:var(--card); font-weight:600; }
.badge { display:inline-block; padding:1px 8px; border-radius:10px; font-size:12px; background:#e8ebf2; }
.badge.paused { background:#fff1d6; color:var(--warn); } .badge.run { background:#e3f5e8; color:var(--ok); }
.badge.failed, .error { color:var(--bad); }
.badge.wf-complete, .badge.wf-done, .badge.wf-fired { background:#e3f5e8; color:var(--ok); }
.badge.wf-failed { background:#fdecec; color:var(--bad); }
.badge.wf-waiting, .badge.wf-suspended, .badge.wf-scheduled { background:#fff1d6; color:var(--warn); }
.badge.wf-running, .badge.wf-pending { background:#e6ecff; color:var(--accent); }
button { font:inherit; padding:4px 10px; border:1px solid #c5cad3; border-radius:5px; background:#fff; cursor:pointer; }
button:hover:not(:disabled) { border-color:var(--accent); }
button.danger { color:var(--bad); } button:disabled { opacity:.45; cursor:not-allowed; }
.toolbar { display:flex; flex-wrap:wrap; gap:8px; align-items:center; margin:8px 0; }
.toolbar .spacer { flex:1; }
.notice { padding:8px 12px; border-radius:6px; margin:8px 0; background:#eef2ff; border:1px solid #c7d2fe; }
.notice.error { background:#fdecec; border-color:#f5b5b5; }
dl.kv { display:grid; grid-template-columns: 180px 1fr; gap:6px 14px; background:var(--card); border:1px solid var(--line); padding:12px; margin:0; }
dl.kv dt { color:var(--muted); } dl.kv dd { margin:0; word-break:break-all; }
pre { background:#0f172a; color:#e2e8f0; padding:10px 12px; border-radius:6px; overflow:auto; max-height:420px; font-size:12px; }
.chart { max-width:820px; background:var(--card); border:1px solid var(--line); border-radius:6px; padding:8px; }
.chart svg { width:100%; height:180px; display:block; }
.legend { font-size:12px; color:var(--muted); } .legend .p { color:var(--accent); } .legend .f { color:var(--bad); }
.pager { display:flex; gap:8px; align-items:center; margin:10px 0; }
.muted { color:var(--muted); }
.limit-form { margin:8px 0 14px; }
.limit-form fieldset { display:flex; flex-wrap:wrap; gap:8px 14px; align-items:center; margin:0; padding:8px 12px; background:var(--card); border:1px solid var(--line); border-radius:6px; }
.limit-form legend { padding:0 4px; color:var(--muted); font-size:12px; text-transform:uppercase; letter-spacing:.3px; }
.limit-form input { font:inherit; width:90px; padding:3px 6px; border:1px solid #c5cad3; border-radius:5px; }
.limit-form input[name=per], .limit-form input[name=key-per] { width:70px; }
.limit-form .limit-per-key { color:var(--muted); font-size:12px; }
.limit-form fieldset:disabled { opacity:.6; }
.limit-form p { margin:4px 0 0; font-size:12px; }
.login { max-width:420px; margin:80px auto; background:var(--card); border:1px solid var(--line); padding:24px; border-radius:8px; }
.login input { width:100%; padding:6px 8px; margin:8px 0 12px; font:inherit; }
`
