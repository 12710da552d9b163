// What the end-to-end scripts e2e.js, mcp.js and gateway.js share: the
// server's address and key from the environment their Go test sets, and
// the "ok <step>" line each checked step prints.
"use strict";

const endpoint = process.env.AGENTMEMORY_E2E_ENDPOINT;
const key = process.env.AGENTMEMORY_E2E_KEY;
if (!endpoint || !key) {
  console.error("AGENTMEMORY_E2E_ENDPOINT and AGENTMEMORY_E2E_KEY are required");
  process.exit(2);
}

function ok(step) {
  console.log("ok " + step);
}

module.exports = { endpoint, key, ok };
