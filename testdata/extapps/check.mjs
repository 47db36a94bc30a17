// The MCP Apps host side (@modelcontextprotocol/ext-apps, pinned beside
// this file) against `wicket mcp --http`: run_backtest's declared view is
// found the way a host finds it, its resource has the App type and valid
// UI metadata, and the view itself, run with the SDK's AppBridge as its
// host, completes the handshake, reads the run's tear sheet through the
// host and shows it. A client without Apps still gets the page's link.
//
// Usage: node check.mjs WICKET_BINARY   (from `make ext-apps`)
import { spawn, execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import vm from "node:vm";

import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { AppBridge, getToolUiResourceUri, RESOURCE_MIME_TYPE } from "@modelcontextprotocol/ext-apps/app-bridge";
import { McpUiResourceMetaSchema, McpUiToolMetaSchema } from "@modelcontextprotocol/ext-apps";

const wicket = process.argv[2];
if (!wicket) {
  console.error("usage: node check.mjs WICKET_BINARY");
  process.exit(2);
}
const failures = [];
function check(ok, what) {
  console.log(`${ok ? "ok  " : "FAIL"} ${what}`);
  if (!ok) {
    failures.push(what);
  }
}
function within(ms, what, promise) {
  let timer;
  return Promise.race([
    promise.finally(() => clearTimeout(timer)),
    new Promise((_, reject) => { timer = setTimeout(() => reject(new Error(`${what}: nothing within ${ms} ms`)), ms); }),
  ]);
}

const proj = mkdtempSync(join(tmpdir(), "wicket-extapps-"));
let server;
try {
  execFileSync(wicket, ["init", proj], { stdio: "ignore" });
  execFileSync(wicket, ["--project", proj, "data", "seed-demo"], { stdio: "ignore" });
  server = spawn(wicket, ["--project", proj, "mcp", "--http", "127.0.0.1:0", "--no-auth", "--profile", "read-only"], { stdio: ["ignore", "ignore", "pipe"] });
  const url = await within(30000, "wicket mcp --http to start", new Promise((resolve, reject) => {
    let seen = "";
    server.stderr.on("data", (b) => {
      seen += b;
      const m = seen.match(/serving Streamable HTTP at (http:\/\/\S+)/);
      if (m) {
        resolve(m[1]);
      }
    });
    server.on("exit", (code) => reject(new Error(`wicket mcp exited ${code}: ${seen}`)));
  }));

  const client = new Client({ name: "ext-apps-host", version: "1" },
    { capabilities: { extensions: { "io.modelcontextprotocol/ui": { mimeTypes: [RESOURCE_MIME_TYPE] } } } });
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));

  // The declaration, as a host reads it.
  const { tools } = await client.listTools();
  const tool = tools.find((t) => t.name === "run_backtest");
  const view = tool && getToolUiResourceUri(tool);
  check(view === "ui://wicket/tear-sheet", `run_backtest declares its view: ${view}`);
  check(tool && McpUiToolMetaSchema.safeParse(tool._meta.ui).success, "run_backtest's _meta.ui is valid tool UI metadata");
  const { resources } = await client.listResources();
  const listed = resources.find((r) => r.uri === view);
  check(listed && listed.mimeType === RESOURCE_MIME_TYPE, `resources/list has the view as ${RESOURCE_MIME_TYPE}: ${listed && listed.mimeType}`);
  const read = await client.readResource({ uri: view });
  const page = read.contents[0];
  check(page.mimeType === RESOURCE_MIME_TYPE, `the view is served as ${RESOURCE_MIME_TYPE}: ${page.mimeType}`);
  const meta = McpUiResourceMetaSchema.safeParse(page._meta && page._meta.ui);
  check(meta.success, `the view's _meta.ui is valid resource UI metadata${meta.success ? "" : ": " + meta.error}`);
  const csp = meta.success ? meta.data.csp : undefined;
  check(csp && csp.connectDomains.length === 0 && csp.resourceDomains.length === 0, "its CSP allows no domain");

  // The view, with the SDK's AppBridge as its host. The page's script
  // runs in a context with a window whose parent is the bridge.
  const script = page.text.match(/<script>([\s\S]*)<\/script>/);
  check(!!script, "the view carries its script inline");
  const listeners = [];
  const note = { textContent: "" };
  const document = { body: { innerHTML: "" }, documentElement: { scrollHeight: 900 }, getElementById: (id) => (id === "wicket-note" ? note : null) };
  const parent = {};
  const window = { parent, addEventListener: (type, f) => type === "message" && listeners.push(f) };
  const toHost = {
    start: async () => {},
    close: async () => {},
    send: async (message) => {
      for (const f of listeners) {
        f({ source: parent, data: structuredClone(message) });
      }
    },
  };
  parent.postMessage = (message) => queueMicrotask(() => toHost.onmessage && toHost.onmessage(structuredClone(message)));
  const bridge = new AppBridge(client, { name: "ext-apps-host", version: "1" }, { serverResources: {}, serverTools: {} });
  const initialized = new Promise((resolve) => { bridge.oninitialized = resolve; });
  const sized = new Promise((resolve) => { bridge.onsizechange = resolve; });
  await bridge.connect(toHost);
  vm.runInNewContext(script[1], { window, document, Promise, Error, queueMicrotask });
  await within(10000, "the view's ui/initialize and initialized", initialized);
  check(true, "the view completed the handshake (ui/initialize, then initialized)");

  const args = { name: "sma_cross", series: "BTC-USD@1d", from: "2023-01-01" };
  const result = await client.callTool({ name: "run_backtest", arguments: args });
  const link = (result.content || []).find((c) => c.type === "resource_link" && c.uri.startsWith("ui://wicket/report/"));
  check(!result.isError && link && link.mimeType === RESOURCE_MIME_TYPE, `without Apps the answer links the tear sheet: ${link && link.uri}`);
  await bridge.sendToolInput({ arguments: args });
  await bridge.sendToolResult(result);
  const size = await within(30000, "the view's size-changed after the tool result", sized);
  check(size.height === 900, `the view reported its size: ${JSON.stringify(size)}`);
  check(document.body.innerHTML.includes('<svg data-chart="equity"') && document.body.innerHTML.includes("<style"),
    `the view shows the run's tear sheet with its styles (${document.body.innerHTML.length} characters)`);
  check(!document.body.innerHTML.includes("<script"), "the shown tear sheet carries no script");
  await client.close();
} catch (err) {
  check(false, String(err && err.stack || err));
} finally {
  if (server) {
    server.kill("SIGTERM");
  }
  rmSync(proj, { recursive: true, force: true });
}
if (failures.length > 0) {
  console.log(`ext-apps: ${failures.length} FAILED`);
  process.exit(1);
}
console.log("ext-apps: every host-side expectation holds");
