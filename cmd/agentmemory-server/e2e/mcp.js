// Drives agentmemory-server's MCP endpoint, /mcp/{store}/{scope}, with the
// official MCP TypeScript SDK client (npm @modelcontextprotocol/sdk) over
// streamable HTTP. Run by TestOfficialMCPSDK in ../e2e_test.go, which starts
// the server over HTTPS and sets the same variables as for e2e.js:
//   AGENTMEMORY_E2E_ENDPOINT  the server's https address
//   AGENTMEMORY_E2E_KEY       an API key the server accepts
//   NODE_EXTRA_CA_CERTS       the server's self-signed certificate
// Prints one "ok <step>" line per checked step and "MCP E2E OK" at the end;
// any failure exits non-zero with the reason.
"use strict";
const assert = require("node:assert/strict");
const { Client } = require("@modelcontextprotocol/sdk/client/index.js");
const { StreamableHTTPClientTransport } = require("@modelcontextprotocol/sdk/client/streamableHttp.js");

const { endpoint, key, ok } = require("./env.js");

// api calls the Memory Store API itself with the key.
async function api(method, path, body) {
  const res = await fetch(endpoint + path + (path.includes("?") ? "&" : "?") + "api-version=v1", {
    method,
    headers: { "api-key": key, "Content-Type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

// connect opens an MCP client session on one scope, sending apiKey as a
// Bearer token.
async function connect(store, scope, apiKey) {
  const client = new Client({ name: "agentmemory-e2e", version: "0.0.0" });
  const transport = new StreamableHTTPClientTransport(new URL(endpoint + "/mcp/" + store + "/" + scope), {
    requestInit: { headers: { Authorization: "Bearer " + apiKey } },
  });
  await client.connect(transport);
  return client;
}

// text joins a tool result's text content, failing on a tool error.
function text(result, tool) {
  assert.ok(!result.isError, tool + " answered an error: " + JSON.stringify(result.content));
  return result.content.filter((c) => c.type === "text").map((c) => c.text).join("\n");
}

async function main() {
  const store = "mcp_store";
  const created = await api("POST", "/memory_stores", {
    name: store,
    definition: { kind: "default", chat_model: "gpt-4.1", embedding_model: "text-embedding-3-small" },
  });
  assert.equal(created.status, 200, "create the store: " + JSON.stringify(created.body));

  const client = await connect(store, "alice", key);
  const info = client.getServerVersion();
  assert.equal(info.name, "agentmemory");
  ok("connect");

  const { tools } = await client.listTools();
  const names = tools.map((t) => t.name);
  for (const want of ["record_turn", "end_session", "retrieve_user_facts", "search_memory"]) {
    assert.ok(names.includes(want), "tool " + want + " listed: " + names.join(", "));
  }
  ok("list_tools");

  const recorded = await client.callTool({
    name: "record_turn",
    arguments: { session_id: "s1", turn_id: "t1", user: "I prefer dark roast coffee in the morning.", assistant: "Noted." },
  });
  text(recorded, "record_turn");
  await client.callTool({
    name: "record_turn",
    arguments: { session_id: "s1", turn_id: "t2", user: "My sister Maya lives in Lisbon.", assistant: "Nice city." },
  });
  ok("record_turn");

  text(await client.callTool({ name: "end_session", arguments: { session_id: "s1" } }), "end_session");
  ok("end_session");

  const searched = await client.callTool({ name: "search_memory", arguments: { query: "coffee", top_k: 5 } });
  assert.match(text(searched, "search_memory"), /dark roast/);
  assert.ok(searched.structuredContent, "search_memory has structured output");
  ok("search_memory");

  const facts = await client.callTool({ name: "retrieve_user_facts", arguments: { query: "Where does Maya live?" } });
  assert.match(text(facts, "retrieve_user_facts"), /Lisbon/);
  ok("retrieve_user_facts");

  // The same memory through the Memory Store API: the session's summary.
  const listed = await api("POST", "/memory_stores/" + store + "/items:list?kind=chat_summary", { scope: "alice" });
  assert.equal(listed.status, 200, JSON.stringify(listed.body));
  assert.ok(listed.body.data.some((m) => /coffee/.test(m.content)), "chat summary through the API: " + JSON.stringify(listed.body));
  ok("same_memory");

  // Another scope of the store sees none of it.
  const bob = await connect(store, "bob", key);
  const bobs = await bob.callTool({ name: "search_memory", arguments: { query: "coffee" } });
  assert.doesNotMatch(text(bobs, "search_memory"), /dark roast/);
  await bob.close();
  ok("scope_isolated");

  // A wrong key is refused before any tool is reached.
  await assert.rejects(connect(store, "alice", key + "-wrong"), (e) => {
    assert.equal(e.code, 401, "HTTP status of " + e.message);
    assert.match(e.message, /"code":"unauthorized"/);
    return true;
  });
  ok("wrong_key_refused");

  await client.close();
  console.log("MCP E2E OK");
}

main().catch((e) => {
  console.error(e && e.stack ? e.stack : e);
  process.exit(1);
});
