// Drives agentmemory-server through all 14 memory store operations of the
// official Azure AI Projects SDK (project.beta.memoryStores). Run by
// TestOfficialSDK in ../main_test.go, which starts the server over HTTPS
// (the SDK sends Bearer tokens only over TLS) and sets:
//   AGENTMEMORY_E2E_ENDPOINT  the server's https address
//   AGENTMEMORY_E2E_KEY       an API key the server accepts
//   NODE_EXTRA_CA_CERTS       the server's self-signed certificate
// Prints one "ok <operation>" line per checked operation and "E2E OK" at
// the end; any failure exits non-zero with the reason.
"use strict";
const assert = require("node:assert/strict");
const { AIProjectClient } = require("@azure/ai-projects");

const { endpoint, key, ok } = require("./env.js");

// A TokenCredential handing out the API key: the SDK sends it as
// "Authorization: Bearer <key>".
const credential = {
  getToken: async () => ({ token: key, expiresOnTimestamp: Date.now() + 3600 * 1000 }),
};

async function collect(iter) {
  const out = [];
  for await (const x of iter) out.push(x);
  return out;
}

function user(text) {
  return { type: "message", role: "user", content: text };
}

async function expectStatus(promise, status, what) {
  try {
    await promise;
  } catch (e) {
    assert.equal(e.statusCode, status, what + ": " + e.message);
    return e;
  }
  assert.fail(what + ": expected HTTP " + status);
}

async function main() {
  const project = new AIProjectClient(endpoint, credential);
  const ms = project.beta.memoryStores;
  const name = "e2e_store";
  const other = "e2e_other";
  const definition = {
    kind: "default",
    chat_model: "gpt-4.1",
    embedding_model: "text-embedding-3-small",
    options: { user_profile_enabled: true, chat_summary_enabled: true, procedural_memory_enabled: false },
  };

  // 1 create
  const created = await ms.create(name, definition, { description: "e2e" });
  assert.equal(created.name, name);
  assert.equal(created.object, "memory_store");
  assert.ok(created.created_at instanceof Date && created.created_at.getFullYear() > 2000);
  await ms.create(other, definition);
  ok("create");

  // 2 get
  const got = await ms.get(name);
  assert.equal(got.id, created.id);
  assert.equal(got.definition.chat_model, "gpt-4.1");
  ok("get");

  // 3 update
  const updated = await ms.update(name, { description: "updated", metadata: { team: "e2e" } });
  assert.equal(updated.description, "updated");
  assert.equal((await ms.get(name)).metadata.team, "e2e");
  ok("update");

  // 4 list (paged: one per page, the SDK follows last_id and has_more)
  const listed = await collect(ms.list({ limit: 1 }));
  assert.deepEqual(listed.map((s) => s.name).sort(), [other, name].sort());
  ok("list");

  // 5 update_memories with the poller; 6 get_update_result
  const poller = ms.updateMemories(name, "alice", {
    items: [user("I prefer dark roast coffee every morning."), user("I am allergic to peanuts.")],
    updateDelayInSecs: 0,
    updateIntervalInMs: 100,
  });
  const result = await poller.pollUntilDone();
  assert.ok(result.memory_operations.length > 0, "memory operations");
  for (const op of result.memory_operations) {
    assert.equal(op.kind, "create");
    assert.equal(op.memory_item.scope, "alice");
  }
  assert.ok(result.memory_operations.some((op) => op.memory_item.kind === "chat_summary"));
  assert.ok(result.memory_operations.some((op) => /coffee/.test(op.memory_item.content)));
  // Offline the counts are the offline client's word counts: not zero.
  assert.ok(result.usage.input_tokens > 0 && result.usage.output_tokens > 0, "usage counted: " + JSON.stringify(result.usage));
  assert.equal(result.usage.total_tokens, result.usage.input_tokens + result.usage.output_tokens + result.usage.embedding_tokens);
  ok("update_memories");
  const state = JSON.parse(await poller.serialize());
  const loc = state.state.config.operationLocation;
  const updateId = decodeURIComponent(new URL(loc).pathname.split("/").pop());
  const upd = await ms.getUpdateResult(name, updateId);
  assert.equal(upd.update_id, updateId);
  assert.equal(upd.status, "completed");
  assert.equal(upd.result.memory_operations.length, result.memory_operations.length);
  ok("get_update_result");

  // previous_update_id extends an update
  const second = await ms
    .updateMemories(name, "alice", {
      items: [user("I also like cappuccino in the afternoon.")],
      previousUpdateId: updateId,
      updateDelayInSecs: 0,
      updateIntervalInMs: 100,
    })
    .pollUntilDone();
  assert.ok(second.memory_operations.length > 0);
  // ... of a completed update: its conversation goes on, and its chat
  // summary is updated rather than a second one made
  const firstSummary = result.memory_operations.find((op) => op.memory_item.kind === "chat_summary").memory_item;
  const again = second.memory_operations.filter((op) => op.memory_item.kind === "chat_summary");
  assert.deepEqual(again.map((op) => [op.kind, op.memory_item.memory_id]), [["update", firstSummary.memory_id]]);
  assert.match(again[0].memory_item.content, /cappuccino/);
  ok("previous_update_id");
  // another scope and another store, for isolation
  await ms.updateMemories(name, "bob", { items: [user("I prefer green tea.")], updateDelayInSecs: 0, updateIntervalInMs: 100 }).pollUntilDone();
  await ms.updateMemories(other, "alice", { items: [user("I prefer sparkling water.")], updateDelayInSecs: 0, updateIntervalInMs: 100 }).pollUntilDone();

  // 7 search_memories
  const search = await ms.searchMemories(name, "alice", { items: [user("What coffee do I like?")], options: { max_memories: 5 } });
  assert.ok(search.search_id);
  assert.ok(search.memories.length > 0 && search.memories.length <= 5);
  assert.ok(search.memories.some((m) => /coffee/.test(m.memory_item.content)));
  for (const m of search.memories) assert.equal(m.memory_item.scope, "alice");
  const bob = await ms.searchMemories(name, "bob", { items: [user("coffee")] });
  assert.ok(!bob.memories.some((m) => /coffee/.test(m.memory_item.content)), "bob sees none of alice's");
  const elsewhere = await ms.searchMemories(other, "alice", { items: [user("coffee")] });
  assert.ok(!elsewhere.memories.some((m) => /coffee/.test(m.memory_item.content)), "another store sees none");
  // previous_search_id: a vague follow-up continues the search before it;
  // an unknown id is refused naming the field.
  const followUp = await ms.searchMemories(name, "alice", {
    items: [user("Which one was it?")],
    previousSearchId: search.search_id,
    options: { max_memories: 5 },
  });
  assert.ok(followUp.search_id && followUp.search_id !== search.search_id);
  assert.ok(followUp.memories.some((m) => /coffee/.test(m.memory_item.content)), "the follow-up sees the conversation");
  const unknownSearch = await expectStatus(
    ms.searchMemories(name, "alice", { items: [user("And then?")], previousSearchId: "memsearch_unknown" }),
    400,
    "unknown previous_search_id",
  );
  assert.equal(unknownSearch.details.error.param, "previous_search_id");
  await expectStatus(
    ms.searchMemories(name, "bob", { items: [user("And then?")], previousSearchId: followUp.search_id }),
    400,
    "another scope's previous_search_id",
  );
  ok("search_memories");

  // 8 list memories
  const items = await collect(ms.listMemories(name, "alice"));
  assert.ok(items.length >= result.memory_operations.length);
  assert.ok(items.every((i) => i.scope === "alice"));
  const profile = await collect(ms.listMemories(name, "alice", { kind: "user_profile" }));
  assert.ok(profile.length > 0 && profile.every((i) => i.kind === "user_profile"));
  // The SDK reads one page of listMemories: its pager keeps only data,
  // first_id, last_id and has_more from the answer, and follows no cursor
  // for this operation. A caller pages by hand with after = the last id.
  for (let i = 0; i < 25; i++) await ms.createMemory(name, "paging", "Paging fact number " + i + ".", "user_profile");
  const firstPage = await collect(ms.listMemories(name, "paging"));
  assert.equal(firstPage.length, 20, "the default page");
  const rest = await collect(ms.listMemories(name, "paging", { after: firstPage[19].memory_id }));
  assert.equal(rest.length, 5);
  const all = new Set([...firstPage, ...rest].map((i) => i.memory_id));
  assert.equal(all.size, 25, "every item once");
  ok("list_memories");

  // 9 create memory, 10 get memory, 11 update memory
  const mine = await ms.createMemory(name, "alice", "Works as a nurse on night shifts.", "user_profile");
  assert.equal(mine.kind, "user_profile");
  ok("create_memory");
  const read = await ms.getMemory(name, mine.memory_id);
  assert.equal(read.content, "Works as a nurse on night shifts.");
  await expectStatus(ms.getMemory(other, mine.memory_id), 404, "get through another store");
  ok("get_memory");
  const changed = await ms.updateMemory(name, mine.memory_id, "Works as a nurse on day shifts since May.");
  assert.equal(changed.memory_id, mine.memory_id);
  assert.equal((await ms.getMemory(name, mine.memory_id)).content, "Works as a nurse on day shifts since May.");
  ok("update_memory");

  // 12 delete memory
  const del = await ms.deleteMemory(name, mine.memory_id);
  assert.equal(del.deleted, true);
  await expectStatus(ms.getMemory(name, mine.memory_id), 404, "deleted memory");
  ok("delete_memory");

  // 13 delete scope
  const ds = await ms.deleteScope(name, "alice");
  assert.equal(ds.deleted, true);
  assert.equal((await collect(ms.listMemories(name, "alice"))).length, 0);
  assert.equal((await ms.searchMemories(name, "alice", { items: [user("coffee")] })).memories.length, 0);
  assert.ok((await collect(ms.listMemories(name, "bob"))).length > 0, "another scope stays");
  assert.ok((await collect(ms.listMemories(other, "alice"))).length > 0, "another store's scope stays");
  ok("delete_scope");

  // errors in the API's shape
  const e = await expectStatus(ms.get("no_such_store"), 404, "unknown store");
  assert.equal(e.details?.error?.param, "name");
  const bad = new AIProjectClient(endpoint, { getToken: async () => ({ token: "wrong", expiresOnTimestamp: Date.now() + 3600e3 }) });
  await expectStatus(bad.beta.memoryStores.get(name), 401, "wrong key");

  // 14 delete
  const gone = await ms.delete(name);
  assert.equal(gone.deleted, true);
  await expectStatus(ms.get(name), 404, "deleted store");
  await ms.delete(other);
  ok("delete");
  console.log("E2E OK");
}

main().catch((err) => {
  console.error("E2E FAILED:", err && err.stack ? err.stack : err);
  process.exit(1);
});
