// Provisioning refusals of the Cosmos DB test server: the service's
// documented 400s on database and container creation, which the stock
// @vercel/cosmosdb-server accepts.
//
//   capabilities       An account without EnableNoSQLVectorSearch refuses a
//                      container with a vector embedding policy or vector
//                      indexes; one without EnableNoSQLFullTextSearch (the
//                      older full-text documentation's enablement) refuses a
//                      full-text policy or full-text indexes. Both
//                      capabilities are on unless launcher.js is started with
//                      --without-capability NAME.
//   shared-throughput  A database created with throughput (x-ms-offer-
//                      throughput or autoscale settings) refuses containers
//                      with vector indexes.
//   dimensions         A flat vector index over more than 505 dimensions is
//                      refused, a quantizedFlat or diskANN index over more
//                      than 4,096.
//
// Each refusal is a 400 whose body has the service's shape: code BadRequest
// and a message "Message: {"Errors":["..."]}" followed by the activity id,
// as the service sends it.
"use strict";

const { Readable } = require("stream");
const crypto = require("crypto");

const createDatabase = require("@vercel/cosmosdb-server/lib/handler/create-database").default;
const createCollection = require("@vercel/cosmosdb-server/lib/handler/create-collection").default;
const deleteDatabase = require("@vercel/cosmosdb-server/lib/handler/delete-database").default;
const readJSON = require("@vercel/cosmosdb-server/lib/json").default;

const VECTOR_SEARCH = "EnableNoSQLVectorSearch";
const FULL_TEXT_SEARCH = "EnableNoSQLFullTextSearch";
const CAPABILITIES = [VECTOR_SEARCH, FULL_TEXT_SEARCH];

// Documented maximum dimensions per vector index type.
const MAX_DIMENSIONS = { flat: 505, quantizedFlat: 4096, diskANN: 4096 };

// The service's texts. The first two are the service's messages as users
// have reported them; the others follow the documented limits in the same
// style (no verbatim text found).
const MESSAGES = {
  vectorCapability: "A Container Vector Policy has been provided, but the capability has not been enabled on your account.",
  fullTextCapability: "A Full Text Policy has been provided, but the capability has not been enabled on your account.",
  sharedThroughput: "Vector Indexing is not supported for shared throughput offer",
  dimensions: (path, type, dims) =>
    `The Vector Indexing Policy's path '${path}' has ${dims} dimensions, more than the ${MAX_DIMENSIONS[type]} supported by vector index type '${type}'.`
};

const state = {
  capabilities: new Set(CAPABILITIES),
  // Ids of the databases created with shared throughput.
  sharedThroughput: new Set()
};

// configure sets the account's capabilities: every known one except those
// in without. An unknown name is an error.
function configure({ without = [] } = {}) {
  without.forEach(name => {
    if (!CAPABILITIES.includes(name)) throw new Error(`unknown capability ${name} (known: ${CAPABILITIES.join(", ")})`);
  });
  state.capabilities = new Set(CAPABILITIES.filter(c => !without.includes(c)));
}

function handles(handler) {
  return handler === createDatabase || handler === createCollection || handler === deleteDatabase;
}

// A request whose body has been read, replayed for the stock handler.
function replay(req, raw) {
  const r = Readable.from([raw]);
  r.headers = req.headers;
  r.method = req.method;
  r.url = req.url;
  return r;
}

function refuse(res, req, text) {
  res.statusCode = 400;
  const activity = crypto.randomUUID();
  return {
    code: "BadRequest",
    message: `Message: {"Errors":[${JSON.stringify(text)}]}\r\nActivityId: ${activity}, Request URI: ${req.url}, RequestStats: , SDK: Microsoft.Azure.Documents.Common/2.14.0`
  };
}

const nonEmpty = a => Array.isArray(a) && a.length > 0;

// refusal returns the text of the service's refusal of a container
// definition in database dbId, or null.
function refusal(dbId, body) {
  const policy = body.indexingPolicy || {};
  const embeddings = (body.vectorEmbeddingPolicy && body.vectorEmbeddingPolicy.vectorEmbeddings) || [];
  const vectorIndexes = policy.vectorIndexes || [];
  if ((nonEmpty(embeddings) || nonEmpty(vectorIndexes)) && !state.capabilities.has(VECTOR_SEARCH)) {
    return MESSAGES.vectorCapability;
  }
  const fullTextPaths = (body.fullTextPolicy && body.fullTextPolicy.fullTextPaths) || [];
  if ((nonEmpty(fullTextPaths) || nonEmpty(policy.fullTextIndexes)) && !state.capabilities.has(FULL_TEXT_SEARCH)) {
    return MESSAGES.fullTextCapability;
  }
  if (nonEmpty(vectorIndexes) && state.sharedThroughput.has(dbId)) return MESSAGES.sharedThroughput;
  for (const idx of vectorIndexes) {
    const e = embeddings.find(x => x && x.path === idx.path);
    const max = MAX_DIMENSIONS[idx.type];
    if (e && max && e.dimensions > max) return MESSAGES.dimensions(idx.path, idx.type, e.dimensions);
  }
  return null;
}

const hasThroughput = headers =>
  headers["x-ms-offer-throughput"] !== undefined || headers["x-ms-cosmos-offer-autopilot-settings"] !== undefined;

// serve runs one of the handlers handles accepts, refusing as the service
// does.
async function serve(handler, account, req, res, params) {
  if (handler === deleteDatabase) {
    const body = await handler(account, req, res, params);
    if (res.statusCode < 300) state.sharedThroughput.delete(params.dbId);
    return body;
  }
  const chunks = [];
  for await (const c of req) chunks.push(c);
  const raw = Buffer.concat(chunks);
  if (handler === createDatabase) {
    const out = await handler(account, replay(req, raw), res, params);
    if (res.statusCode === 201) {
      const { id } = JSON.parse(raw.toString());
      if (hasThroughput(req.headers)) state.sharedThroughput.add(id);
      else state.sharedThroughput.delete(id);
    }
    return out;
  }
  let body;
  try {
    body = JSON.parse(raw.toString());
  } catch (err) {
    body = null;
  }
  if (body && typeof body === "object") {
    const text = refusal(params.dbId, body);
    if (text) return refuse(res, req, text);
  }
  return handler(account, replay(req, raw), res, params);
}

// selfcheck drives the refusals that need no account setting over HTTP
// (shared throughput, dimensions) and fails naming the patch.
async function selfcheck(request) {
  const DB = "__cosmostest_provisioning";
  const fail = what => {
    throw new Error(`patch provisioning: ${what}`);
  };
  const container = (id, type, dims) => ({
    id,
    partitionKey: { paths: ["/pk"], kind: "Hash", version: 2 },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: dims }] },
    indexingPolicy: { indexingMode: "consistent", automatic: true, includedPaths: [{ path: "/*" }], excludedPaths: [{ path: "/v/*" }], vectorIndexes: [{ path: "/v", type }] }
  });
  await request("DELETE", `/dbs/${DB}`);
  let r = await request("POST", "/dbs", { body: { id: DB } });
  if (r.status !== 201) fail(`create database: HTTP ${r.status}`);
  r = await request("POST", `/dbs/${DB}/colls`, { body: container("flat", "flat", 506) });
  if (r.status !== 400 || !/505/.test(r.body && r.body.message)) fail(`a flat index of 506 dimensions: HTTP ${r.status}, want 400`);
  r = await request("POST", `/dbs/${DB}/colls`, { body: container("q", "quantizedFlat", 1536) });
  if (r.status !== 201) fail(`a quantizedFlat index of 1536 dimensions: HTTP ${r.status}, want 201`);
  await request("DELETE", `/dbs/${DB}`);
  r = await request("POST", "/dbs", { body: { id: DB }, headers: { "x-ms-offer-throughput": "400" } });
  if (r.status !== 201) fail(`create database with throughput: HTTP ${r.status}`);
  r = await request("POST", `/dbs/${DB}/colls`, { body: container("q", "quantizedFlat", 8) });
  if (r.status !== 400 || !/shared throughput/.test(r.body && r.body.message)) fail(`a vector index in a shared-throughput database: HTTP ${r.status}, want 400`);
  r = await request("DELETE", `/dbs/${DB}`);
  if (r.status !== 204) fail(`delete database: HTTP ${r.status}`);
}

module.exports = { configure, handles, serve, selfcheck, CAPABILITIES, MAX_DIMENSIONS, MESSAGES };
