// Drives agentmemory-server's OpenAI-compatible gateway, /v1/, with the
// official OpenAI JavaScript SDK (npm openai), the one changed base URL.
// Run by TestOfficialOpenAISDK in ../e2e_test.go, which starts the server
// over HTTPS in front of a fake model endpoint and sets the same variables
// as for e2e.js:
//   AGENTMEMORY_E2E_ENDPOINT  the server's https address
//   AGENTMEMORY_E2E_KEY       an API key the server accepts
//   NODE_EXTRA_CA_CERTS       the server's self-signed certificate
// Prints one "ok <step>" line per checked step and "GATEWAY E2E OK" at the
// end; any failure exits non-zero with the reason. The Go test then checks
// what the model endpoint received.
"use strict";
const assert = require("node:assert/strict");
const OpenAI = require("openai");

const { endpoint, key, ok } = require("./env.js");

// client is an OpenAI client of the gateway for one user.
function client(user) {
  return new OpenAI({ baseURL: endpoint + "/v1", apiKey: key, maxRetries: 0, defaultHeaders: { "X-Memory-User": user } });
}

// memory calls the gateway's memory routes with the key.
async function memory(method, path) {
  const res = await fetch(endpoint + "/v1/memory" + path, { method, headers: { Authorization: "Bearer " + key } });
  const text = await res.text();
  return { status: res.status, body: text ? JSON.parse(text) : null };
}

const sleep = (ms) => new Promise((resolve) => setTimeout(resolve, ms));

const weather = {
  type: "function",
  name: "get_weather",
  description: "The weather in a city.",
  parameters: { type: "object", properties: { city: { type: "string" } }, required: ["city"] },
};

async function main() {
  const alice = client("alice");
  const bob = client("bob");
  const model = "gpt-test";

  // Chat Completions, in alice's first session.
  const session1 = { headers: { "X-Memory-Session": "e2e-first" } };
  const { data: chat, response: chatResp } = await alice.chat.completions
    .create({ model, messages: [{ role: "user", content: "My dog's name is Biscuit and he is a beagle." }] }, session1)
    .withResponse();
  assert.match(chat.choices[0].message.content, /^Noted:/);
  assert.match(chatResp.headers.get("x-memory"), /^used/, "memory was used");
  ok("chat_completion");

  const stream = await alice.chat.completions.create(
    { model, stream: true, messages: [{ role: "user", content: "He loves long walks on the beach." }] },
    session1,
  );
  let streamed = "";
  for await (const chunk of stream) {
    streamed += chunk.choices[0]?.delta?.content ?? "";
  }
  assert.match(streamed, /^Noted: He loves long walks/);
  ok("chat_stream");

  // The session idles out; its summary is alice's memory.
  let summary;
  for (let i = 0; i < 100 && !summary; i++) {
    await sleep(100);
    const list = await memory("GET", "?user_id=alice");
    assert.equal(list.status, 200, JSON.stringify(list.body));
    summary = list.body.data.find((m) => m.kind === "chat_summary");
  }
  assert.ok(summary, "the first session's summary is listed");
  assert.match(summary.content, /Biscuit/);
  ok("session_summarised");

  // Responses, a new chain (a new session): the fact of the first session
  // reaches the model, and the chain continues through previous_response_id.
  const r1 = await alice.responses.create({ model, instructions: "Be brief.", input: "What is my dog called?" });
  assert.match(r1.id, /^resp_/);
  assert.match(r1.output_text, /^Noted: What is my dog called\?/);
  ok("responses_create");

  const r2 = await alice.responses.create({ model, previous_response_id: r1.id, input: "And which breed is he?" });
  assert.equal(r2.previous_response_id, r1.id);
  ok("responses_chain");

  const events = await alice.responses.create({ model, previous_response_id: r2.id, input: "Say it once more.", stream: true });
  let r3;
  let text = "";
  for await (const ev of events) {
    if (ev.type === "response.output_text.delta") text += ev.delta;
    if (ev.type === "response.completed") r3 = ev.response;
  }
  assert.ok(r3, "the stream ends with response.completed");
  assert.equal(r3.previous_response_id, r2.id);
  assert.equal(text, r3.output.find((o) => o.type === "message").content[0].text);
  const r4 = await alice.responses.create({ model, previous_response_id: r3.id, input: "Thanks, that is all." });
  assert.equal(r4.previous_response_id, r3.id);
  ok("responses_stream_chain");

  // A client tool call round trip, through the chain.
  const call = await alice.responses.create({ model, tools: [weather], input: "What is the weather in Lisbon?" });
  const fc = call.output.find((o) => o.type === "function_call");
  assert.ok(fc, "a function_call: " + JSON.stringify(call.output));
  assert.equal(fc.name, "get_weather");
  assert.deepEqual(JSON.parse(fc.arguments), { city: "Lisbon" });
  const answer = await alice.responses.create({
    model,
    tools: [weather],
    previous_response_id: call.id,
    input: [{ type: "function_call_output", call_id: fc.call_id, output: "24C and sunny" }],
  });
  assert.match(answer.output_text, /24C and sunny/);
  ok("tool_round_trip");

  // Bob: his requests never carry alice's memory, and alice's chain is
  // not his.
  const bobChat = await bob.chat.completions.create({ model, messages: [{ role: "user", content: "Bob here. What is my dog called?" }] });
  assert.match(bobChat.choices[0].message.content, /^Noted: Bob here/);
  const bobResp = await bob.responses.create({ model, input: "Bob here. What is my dog called?" });
  assert.match(bobResp.output_text, /^Noted: Bob here/);
  ok("other_user");
  await assert.rejects(
    bob.responses.create({ model, previous_response_id: r1.id, input: "Bob here. Continue." }),
    (err) => err.status === 400 && err.code === "previous_response_not_found",
  );
  ok("foreign_chain_refused");

  // The memory routes forget with a receipt.
  const forgot = await memory("DELETE", "/" + encodeURIComponent(summary.id) + "?user_id=alice");
  assert.equal(forgot.status, 200, JSON.stringify(forgot.body));
  assert.equal(forgot.body.deleted, true);
  assert.ok(forgot.body.receipt, "a receipt: " + JSON.stringify(forgot.body));
  const after = await memory("GET", "?user_id=alice");
  assert.ok(!after.body.data.some((m) => m.id === summary.id), "the forgotten summary is no longer listed");
  ok("forget_memory");
  const gone = await memory("DELETE", "?user_id=bob");
  assert.equal(gone.status, 200, JSON.stringify(gone.body));
  assert.ok(gone.body.receipt, "a receipt: " + JSON.stringify(gone.body));
  ok("forget_user");

  console.log("GATEWAY E2E OK");
}

main().catch((err) => {
  console.error("GATEWAY E2E FAILED:", err);
  process.exit(1);
});
