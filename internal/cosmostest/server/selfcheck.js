// Start-up self-check of launcher.js: drives the patched server over HTTP,
// as a Cosmos client would, and fails naming the patch whose behaviour is
// wrong, so a package update that silently defeats a patch stops the
// launcher instead of passing tests for the wrong reason.
"use strict";

const http = require("http");

const DB = "__cosmostest_selfcheck";

function request(endpoint, method, path, { body, headers = {}, pk } = {}) {
  const h = { "content-type": "application/json", ...headers };
  if (pk !== undefined) h["x-ms-documentdb-partitionkey"] = JSON.stringify([pk]);
  const data = body === undefined ? undefined : JSON.stringify(body);
  return new Promise((resolve, reject) => {
    const req = http.request(`${endpoint}${path}`, { method, headers: h }, res => {
      const chunks = [];
      res.on("data", c => chunks.push(c));
      res.on("end", () => {
        const text = Buffer.concat(chunks).toString();
        let json = null;
        try {
          json = text ? JSON.parse(text) : null;
        } catch (err) {
          json = null;
        }
        resolve({ status: res.statusCode, headers: res.headers, body: json });
      });
    });
    req.on("error", reject);
    if (data !== undefined) req.write(data);
    req.end();
  });
}

function query(endpoint, sql, parameters, pk) {
  return request(endpoint, "POST", `/dbs/${DB}/colls/c/docs`, {
    body: { query: sql, parameters },
    pk,
    headers: {
      "content-type": "application/query+json",
      "x-ms-documentdb-isquery": "true",
      "x-ms-documentdb-query-enablecrosspartition": "true"
    }
  });
}

async function ids(endpoint, patch, sql, parameters, pk, want) {
  const r = await query(endpoint, sql, parameters, pk);
  const got = r.status === 200 ? r.body.Documents.map(d => d.id) : `HTTP ${r.status} ${JSON.stringify(r.body)}`;
  if (JSON.stringify(got) !== JSON.stringify(want)) {
    throw new Error(`patch ${patch}: ${sql} gave ${JSON.stringify(got)}, want ${JSON.stringify(want)}`);
  }
}

function expect(patch, ok, what) {
  if (!ok) throw new Error(`patch ${patch}: ${what}`);
}

async function run(endpoint) {
  const meta = await request(endpoint, "GET", "/");
  expect("http-endpoints", meta.status === 200 && meta.body.writableLocations.every(l => l.databaseAccountEndpoint.startsWith("http://")), "account endpoints are not http://");

  await request(endpoint, "DELETE", `/dbs/${DB}`);
  let r = await request(endpoint, "POST", "/dbs", { body: { id: DB } });
  expect("stock", r.status === 201, `create database: HTTP ${r.status}`);
  const container = {
    id: "c",
    partitionKey: { paths: ["/pk"], kind: "Hash", version: 2 },
    vectorEmbeddingPolicy: { vectorEmbeddings: [{ path: "/v", dataType: "float32", distanceFunction: "cosine", dimensions: 2 }] },
    fullTextPolicy: { defaultLanguage: "en-US", fullTextPaths: [{ path: "/t", language: "en-US" }] },
    indexingPolicy: {
      indexingMode: "consistent",
      automatic: true,
      includedPaths: [{ path: "/*" }],
      excludedPaths: [{ path: "/v/*" }],
      vectorIndexes: [{ path: "/v", type: "quantizedFlat" }],
      fullTextIndexes: [{ path: "/t" }]
    }
  };
  r = await request(endpoint, "POST", `/dbs/${DB}/colls`, { body: container });
  expect("stock", r.status === 201, `create container: HTTP ${r.status}`);
  r = await request(endpoint, "GET", `/dbs/${DB}/colls/c`);
  const got = r.body || {};
  expect(
    "container-policy",
    JSON.stringify(got.vectorEmbeddingPolicy) === JSON.stringify(container.vectorEmbeddingPolicy) &&
      JSON.stringify(got.fullTextPolicy) === JSON.stringify(container.fullTextPolicy) &&
      JSON.stringify(got.indexingPolicy.vectorIndexes) === JSON.stringify(container.indexingPolicy.vectorIndexes) &&
      JSON.stringify(got.indexingPolicy.fullTextIndexes) === JSON.stringify(container.indexingPolicy.fullTextIndexes),
    "container policies are not returned as sent"
  );

  const docs = [
    { id: "1", pk: "a", v: [1, 0], t: "Running dogs bark" },
    { id: "2", pk: "a", v: [0, 1], t: "cats sleep all day" },
    { id: "3", pk: "a", v: [0.8, 0.6], t: "a dog" },
    { id: "1", pk: "b", v: [1, 0], t: "dog" },
    { id: "1", pk: "c", t: ["dog"] },
    { id: "2", pk: "c", t: "the dog" }
  ];
  for (const d of docs) {
    r = await request(endpoint, "POST", `/dbs/${DB}/colls/c/docs`, { body: d, pk: d.pk });
    expect("stock", r.status === 201, `create item: HTTP ${r.status}`);
  }

  r = await request(endpoint, "GET", `/dbs/${DB}/colls/c/docs/9`, { pk: "a" });
  expect("not-found", r.status === 404 && r.body && r.body.code === "NotFound", `read of a missing item: HTTP ${r.status}`);
  r = await request(endpoint, "DELETE", `/dbs/${DB}/colls/c/docs/2`, { pk: "b" });
  expect("not-found", r.status === 404, `delete of an item in another partition: HTTP ${r.status}`);
  r = await request(endpoint, "GET", `/dbs/${DB}/colls/c/docs/1`, { pk: "b" });
  expect("stock", r.status === 200 && r.body.pk === "b", `point read: HTTP ${r.status}`);

  await ids(endpoint, "partition-scope", "SELECT c.id FROM c", [], "b", ["1"]);
  await ids(endpoint, "functions/order-by", "SELECT c.id, VectorDistance(c.v, @q) AS s FROM c ORDER BY VectorDistance(c.v, @q)", [{ name: "@q", value: [1, 0] }], "a", ["1", "3", "2"]);
  await ids(endpoint, "functions", "SELECT c.id FROM c WHERE FullTextContains(c.t, 'dog')", [], "a", ["1", "3"]);
  await ids(endpoint, "functions/order-by", "SELECT c.id FROM c ORDER BY RANK FullTextScore(c.t, 'dog')", [], "a", ["3", "1", "2"]);
  await ids(endpoint, "functions (arrays are not text)", "SELECT c.id FROM c WHERE FullTextContains(c.t, 'dog')", [], "c", ["2"]);
  await ids(endpoint, "functions (stopwords)", "SELECT c.id FROM c WHERE FullTextContainsAny(c.t, 'the', 'a')", [], "c", []);
  await ids(endpoint, "order-by", "SELECT c.id FROM c ORDER BY RANK RRF(VectorDistance(c.v, @q), FullTextScore(c.t, 'sleep'))", [{ name: "@q", value: [1, 0] }], "a", ["2", "1", "3"]);
  await ids(endpoint, "offset-limit", "SELECT c.id FROM c ORDER BY c.id OFFSET 1 LIMIT 1", [], "a", ["2"]);

  r = await request(endpoint, "DELETE", `/dbs/${DB}`);
  expect("stock", r.status === 204, `delete database: HTTP ${r.status}`);
}

module.exports = { run, request };
