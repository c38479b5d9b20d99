"""The demo's MCP App (``io.modelcontextprotocol/ui``): a live chart whose view steers its task.

``live_chart`` (a task where the client asks) draws ``points`` points of a damped wave, one every
``interval`` seconds; its tools/list entry names the view ``ui://demo/live-chart.html``
(``_meta.ui.resourceUri``). The view asks the app-only tools: ``chart_points`` (the points so far, polled
while the task runs: progress drawn live, with nothing but ``tools/call``) and ``steer_chart`` (``stop``
ends the run early with the points drawn so far; ``faster`` halves the interval). Their visibility is
``["app"]``: listed, but meant for the view, not a model. Runs are kept by ``label`` (the last
``MAX_RUNS``), in this process.

``resources/read`` of ``ui://demo/live-chart.html`` returns the view (``text/html;profile=mcp-app``, no
CSP domains: the spec's restrictive default). The view is plain HTML and script, no SDK: it speaks the
bridge's JSON-RPC over ``postMessage`` itself.
"""

from __future__ import annotations

import asyncio
import math
from collections import OrderedDict
from typing import Any

from .tools import Tool, ToolContext, text_result

EXTENSION = "io.modelcontextprotocol/ui"
VIEW_URI = "ui://demo/live-chart.html"
MIME_TYPE = "text/html;profile=mcp-app"
MAX_RUNS = 100
#: The JSON-RPC error of a resource the server does not have (MCP's -32002).
RESOURCE_NOT_FOUND = -32002


class _Run:
    def __init__(self, interval: float) -> None:
        self.points: list[list[float]] = []
        self.interval = interval
        self.stop = False
        self.done = False


RUNS: OrderedDict[str, _Run] = OrderedDict()


async def live_chart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    label, total, interval = args["label"], int(args["points"]), float(args["interval"])
    run = _Run(interval)
    RUNS[label] = run
    RUNS.move_to_end(label)
    while len(RUNS) > MAX_RUNS:
        RUNS.popitem(last=False)
    ctx.report(f"0/{total} points", 0, total)
    for i in range(total):
        if run.stop:
            break
        await asyncio.sleep(run.interval)
        x = i / 4
        run.points.append([round(x, 3), round(math.exp(-x / 12) * math.sin(x), 4)])
        ctx.report(f"{i + 1}/{total} points", i + 1, total)
    run.done = True
    stopped = len(run.points) < total
    text = f"{label}: {len(run.points)} points" + (" (stopped early from the view)" if stopped else "")
    return text_result(text, structured={"label": label, "points": run.points, "stopped": stopped})


async def chart_points(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    run = RUNS.get(args["label"])
    points = run.points if run else []
    done = run.done if run else False
    return text_result(f"{len(points)} points", structured={"points": points, "done": done})


async def steer_chart(args: dict[str, Any], ctx: ToolContext) -> dict[str, Any]:
    run = RUNS.get(args["label"])
    if run is None or run.done:
        return text_result(f"no running chart named {args['label']!r}", is_error=True)
    if args["action"] == "stop":
        run.stop = True
    else:
        run.interval = max(0.02, run.interval / 2)
    return text_result(f"{args['label']}: {args['action']}", structured={"action": args["action"]})


_LABEL = {"type": "string", "maxLength": 200, "default": "chart", "description": "The run's name."}

LIVE_CHART = Tool(
    name="live_chart",
    title="Live chart",
    description="Draws a damped wave point by point; its view (MCP Apps) shows it live and can stop it.",
    input_schema={
        "type": "object",
        "properties": {
            "label": _LABEL,
            "points": {"type": "integer", "minimum": 1, "maximum": 500, "default": 40},
            "interval": {"type": "number", "minimum": 0, "maximum": 10, "default": 0.25},
        },
    },
    body=live_chart,
    task_support="optional",
    meta={"ui": {"resourceUri": VIEW_URI}},
)
CHART_POINTS = Tool(
    name="chart_points",
    title="Chart points so far",
    description="The points of a live_chart run so far (for its view).",
    input_schema={"type": "object", "properties": {"label": _LABEL}},
    body=chart_points,
    meta={"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}},
)
STEER_CHART = Tool(
    name="steer_chart",
    title="Steer a live chart",
    description="Stops a live_chart run early or makes it faster (for its view).",
    input_schema={
        "type": "object",
        "properties": {"label": _LABEL, "action": {"type": "string", "enum": ["stop", "faster"]}},
        "required": ["action"],
    },
    body=steer_chart,
    meta={"ui": {"resourceUri": VIEW_URI, "visibility": ["app"]}},
)

APP_TOOLS = [LIVE_CHART, CHART_POINTS, STEER_CHART]

VIEW_HTML = """<!DOCTYPE html>
<html><head><meta charset="utf-8"><title>Live chart</title>
<style>
  :root { color-scheme: light dark; }
  body { margin: 0; padding: 8px 10px; font: 13px var(--font-sans, system-ui, sans-serif);
         color: var(--color-text-primary, #222); background: var(--color-background-primary, #fff); }
  body.dark { color: var(--color-text-primary, #ddd); background: var(--color-background-primary, #1e1e1e); }
  svg { width: 100%; height: 180px; display: block; }
  .line { fill: none; stroke: #1f77b4; stroke-width: 2; }
  body.dark .line { stroke: #6cb6ff; }
  .axis { stroke: #999; stroke-width: 1; }
  button { margin-right: 6px; }
  #status { margin-left: 6px; }
</style></head>
<body>
<div><button id="stop" disabled>Stop here</button><button id="faster" disabled>Faster</button>
<span id="status">waiting for the task…</span></div>
<svg id="chart" viewBox="0 0 400 180" preserveAspectRatio="none">
  <line class="axis" x1="0" y1="90" x2="400" y2="90"/><polyline id="line" class="line" points=""/>
</svg>
<script>
(() => {
  let next = 1, label = "chart", total = 40, done = false, timer = null;
  const waiting = new Map();
  const $ = (id) => document.getElementById(id);
  const post = (msg) => window.parent.postMessage(msg, "*");
  function request(method, params) {
    const id = next++;
    post({ jsonrpc: "2.0", id, method, params });
    return new Promise((resolve, reject) => waiting.set(id, { resolve, reject }));
  }
  const notify = (method, params) => post({ jsonrpc: "2.0", method, params });
  function draw(points) {
    const xmax = Math.max(1, (total - 1) / 4);
    $("line").setAttribute("points", points.map(([x, y]) => `${(x / xmax) * 400},${90 - y * 80}`).join(" "));
  }
  function status(text) { $("status").textContent = text; }
  function buttons(on) { $("stop").disabled = !on; $("faster").disabled = !on; }
  async function poll() {
    if (done) return;
    try {
      const r = await request("tools/call", { name: "chart_points", arguments: { label } });
      const points = (r.structuredContent || {}).points || [];
      if (!done) { draw(points); status(`${points.length}/${total} points`); }
    } catch (e) { status(`polling failed: ${e.message || e}`); }
    if (!done) timer = setTimeout(poll, 400);
  }
  async function steer(action) {
    try {
      const r = await request("tools/call", { name: "steer_chart", arguments: { label, action } });
      status(r.isError ? "the chart was not running" : `asked: ${action}`);
    } catch (e) { status(`refused: ${e.message || e}`); }
  }
  $("stop").onclick = () => steer("stop");
  $("faster").onclick = () => steer("faster");
  function theme(ctx) {
    if (!ctx) return;
    if (ctx.theme) document.body.classList.toggle("dark", ctx.theme === "dark");
    const vars = (ctx.styles || {}).variables || {};
    for (const [k, v] of Object.entries(vars)) if (v) document.documentElement.style.setProperty(k, v);
  }
  const on = {
    "ui/notifications/tool-input": (p) => {
      const a = (p && p.arguments) || {};
      label = typeof a.label === "string" ? a.label : "chart";
      total = Number.isInteger(a.points) ? a.points : 40;
      buttons(true); status("running…"); poll();
    },
    "ui/notifications/tool-result": (p) => {
      done = true; clearTimeout(timer); buttons(false);
      const s = (p && p.structuredContent) || {};
      draw(s.points || []);
      status(`done: ${(s.points || []).length} points${s.stopped ? " (stopped early)" : ""}`);
    },
    "ui/notifications/tool-cancelled": (p) => {
      done = true; clearTimeout(timer); buttons(false); status(`cancelled${p && p.reason ? ": " + p.reason : ""}`);
    },
    "ui/notifications/host-context-changed": theme,
  };
  window.addEventListener("message", (event) => {
    if (event.source !== window.parent) return;
    const m = event.data;
    if (!m || m.jsonrpc !== "2.0") return;
    if (m.id !== undefined && !m.method) {
      const w = waiting.get(m.id); waiting.delete(m.id);
      if (w) m.error ? w.reject(new Error(m.error.message)) : w.resolve(m.result);
    } else if (m.method === "ui/resource-teardown") {
      done = true; clearTimeout(timer);
      notify("notifications/message", { level: "info", logger: "live-chart", data: "torn down" });
      post({ jsonrpc: "2.0", id: m.id, result: {} });
    } else if (m.method && on[m.method]) {
      on[m.method](m.params);
    } else if (m.id !== undefined) {
      post({ jsonrpc: "2.0", id: m.id, error: { code: -32601, message: "Method not found" } });
    }
  });
  request("ui/initialize", {
    appInfo: { name: "demo-live-chart", version: "1.0.0" },
    appCapabilities: { availableDisplayModes: ["inline"] },
    protocolVersion: "2026-01-26",
  }).then((r) => {
    theme(r.hostContext);
    notify("ui/notifications/initialized", {});
    notify("ui/notifications/size-changed", { height: document.documentElement.scrollHeight });
  });
})();
</script>
</body></html>
"""


def declares_apps(capabilities: Any) -> bool:
    """Whether a client's capabilities declare MCP Apps."""
    extensions = capabilities.get("extensions") if isinstance(capabilities, dict) else None
    return isinstance(extensions, dict) and isinstance(extensions.get(EXTENSION), dict)


def for_client(entry: dict[str, Any], apps: bool) -> dict[str, Any]:
    """A tools/list entry as a client sees it: without ``_meta.ui`` when it did not declare MCP Apps (the
    spec's advice: a host without apps gets the tool's text result)."""
    if apps or "_meta" not in entry:
        return entry
    return {k: v for k, v in entry.items() if k != "_meta"}


def read_resource(uri: Any) -> dict[str, Any] | None:
    """The ``resources/read`` result of ``uri`` (None: no such resource)."""
    if uri != VIEW_URI:
        return None
    return {"contents": [{"uri": VIEW_URI, "mimeType": MIME_TYPE, "text": VIEW_HTML}]}


def list_resources() -> dict[str, Any]:
    """The ``resources/list`` result: the view, with its ``_meta.ui`` (the border it prefers)."""
    return {
        "resources": [
            {
                "uri": VIEW_URI,
                "name": "live_chart_view",
                "mimeType": MIME_TYPE,
                "_meta": {"ui": {"prefersBorder": True}},
            }
        ]
    }
