#!/usr/bin/env node
// Cosmos DB for NoSQL test server for agentmemory.
//
// Starts the stock @vercel/cosmosdb-server (pinned in package.json) on
// 127.0.0.1 over plain HTTP (the CLI's --no-ssl) and extends it at run time,
// without forking it: the patches below wrap or replace properties of the
// packages' module objects; nothing under node_modules is modified.
//
//   node launcher.js [--port N]          (or COSMOSTEST_PORT; 0 = a free port)
//                    [--exit-on-stdin-close]
//                    [--without-capability NAME]...  (an account without
//                    EnableNoSQLVectorSearch or EnableNoSQLFullTextSearch)
//                    [--skip-self-check]  (a second server of a test binary
//                    whose first has passed it)
//
// COSMOSTEST_LOG=1 logs each request (method, path, partition key, status)
// to stderr.
//
// Once every patch has passed the self-check, one line is printed on stdout:
//
//   LISTENING http://127.0.0.1:PORT
//
// Patches (each named in the self-check's failure message):
//   query-syntax      OFFSET n LIMIT m and ORDER BY RANK are cut from the SQL
//                     text before the stock parser sees it.
//   functions         VectorDistance, FullTextContains/All/Any, FullTextScore
//                     added to the engine's built-in function module ($b).
//                     Full text as the service documents it: words
//                     lower-cased, English stopwords dropped (from texts and
//                     terms), stemmed; a string property only, never the
//                     strings of an array.
//   order-by          ORDER BY on expressions, VectorDistance, FullTextScore
//                     and RRF(...): the AST is rewritten so each sort key is
//                     computed by a correlated JOIN subquery; the engine's
//                     sort helper fuses RRF ranks.
//   offset-limit      the engine's paginate helper skips/limits rows.
//   partition-scope   a query with x-ms-documentdb-partitionkey only sees that
//                     logical partition (stock queries see every partition).
//   not-found         404 NotFound (not 500) for a missing item on read,
//                     replace, patch and delete; Cosmos-shaped error bodies.
//   http-endpoints    the account document advertises http:// endpoints.
//   container-policy  container definitions (vector, full-text, indexing
//                     policies) are kept and returned as sent.
//   provisioning      the service's refusals on container creation: missing
//                     capabilities, vector indexes in a shared-throughput
//                     database, dimension limits per index type
//                     (provisioning.js).
"use strict";

const http = require("http");
const { AsyncLocalStorage } = require("async_hooks");

const cosmosServer = require("@vercel/cosmosdb-server");
const routes = require("@vercel/cosmosdb-server/lib/routes");
const Items = require("@vercel/cosmosdb-server/lib/account/items").default;
const Documents = require("@vercel/cosmosdb-server/lib/account/documents").default;
const queryDocuments = require("@vercel/cosmosdb-server/lib/handler/query-documents").default;
const readDocument = require("@vercel/cosmosdb-server/lib/handler/read-document").default;
const replaceDocument = require("@vercel/cosmosdb-server/lib/handler/replace-document").default;
const deleteDocument = require("@vercel/cosmosdb-server/lib/handler/delete-document").default;
const patchDocument = require("@vercel/cosmosdb-server/lib/handler/patch-document").default;
const readMeta = require("@vercel/cosmosdb-server/lib/handler/read-meta").default;
const provisioning = require("./provisioning");
const cosmosQuery = require("@zeit/cosmosdb-query");
const builtins = require("@zeit/cosmosdb-query/lib/builtin-functions");
const helpers = require("@zeit/cosmosdb-query/lib/helpers");

const { SyntaxError: QuerySyntaxError } = cosmosQuery;

// Alias of the JOIN that carries computed ORDER BY keys.
const OB = "__am_ob";
// Reciprocal Rank Fusion constant, as in Cosmos DB.
const RRF_K = 60;
// BM25 parameters.
const BM25_K1 = 1.2;
const BM25_B = 0.75;

// ---------------------------------------------------------------------------
// Request scope and per-query execution context.

// Request-level state (the partition key header) follows the async handler.
const requestScope = new AsyncLocalStorage();
// The query being executed; queries run synchronously, so a variable set
// around the engine call is enough.
let current = null;

// ---------------------------------------------------------------------------
// query-syntax: scan the SQL text at parenthesis depth 0, outside strings and
// comments, for ORDER BY RANK and a trailing OFFSET ... LIMIT ....

function topLevelWords(sql) {
  const words = [];
  let depth = 0;
  for (let i = 0; i < sql.length; ) {
    const ch = sql[i];
    if (ch === "'" || ch === '"') {
      let j = i + 1;
      while (j < sql.length && sql[j] !== ch) j += sql[j] === "\\" ? 2 : 1;
      i = j + 1;
    } else if (ch === "-" && sql[i + 1] === "-") {
      while (i < sql.length && sql[i] !== "\n") i += 1;
    } else if (ch === "(" || ch === "[" || ch === "{") {
      depth += 1;
      i += 1;
    } else if (ch === ")" || ch === "]" || ch === "}") {
      depth -= 1;
      i += 1;
    } else if (/[A-Za-z_@]/.test(ch)) {
      let j = i + 1;
      while (j < sql.length && /[A-Za-z0-9_]/.test(sql[j])) j += 1;
      if (depth === 0) words.push({ word: sql.slice(i, j).toUpperCase(), start: i, end: j });
      i = j;
    } else {
      i += 1;
    }
  }
  return words;
}

// Returns { sql, rank, offset, limit } with the extensions cut out; offset
// and limit are {value} or {param} or undefined.
function preprocess(sql) {
  const out = { sql, rank: false };
  const words = topLevelWords(sql);
  const off = words.findIndex(w => w.word === "OFFSET");
  if (off >= 0) {
    const m = /^OFFSET\s+(\d+|@\w+)\s+LIMIT\s+(\d+|@\w+)\s*$/i.exec(sql.slice(words[off].start).trim());
    if (!m) throw new QuerySyntaxError("OFFSET must be followed by LIMIT: OFFSET <number> LIMIT <number>, at the end of the query");
    const arg = s => (s[0] === "@" ? { param: s } : { value: Number(s) });
    out.offset = arg(m[1]);
    out.limit = arg(m[2]);
    out.sql = sql.slice(0, words[off].start);
  } else if (words.some(w => w.word === "LIMIT")) {
    throw new QuerySyntaxError("LIMIT requires OFFSET: OFFSET <number> LIMIT <number>");
  }
  for (let i = 0; i + 2 < words.length; i += 1) {
    if (words[i].word === "ORDER" && words[i + 1].word === "BY" && words[i + 2].word === "RANK") {
      out.rank = true;
      out.sql = out.sql.slice(0, words[i + 2].start) + out.sql.slice(words[i + 2].end);
      break;
    }
  }
  return out;
}

// ---------------------------------------------------------------------------
// functions: the engine calls built-ins as $b.NAME (upper-cased). The AST
// rewrite below renames the Cosmos functions to these internal names and
// passes the property path of the first argument, so the function can find
// the container's vector policy and the full-text statistics.

const INTERNAL = {
  VECTORDISTANCE: "__am_VectorDistance",
  FULLTEXTCONTAINS: "__am_FullTextContains",
  FULLTEXTCONTAINSALL: "__am_FullTextContainsAll",
  FULLTEXTCONTAINSANY: "__am_FullTextContainsAny",
  FULLTEXTSCORE: "__am_FullTextScore"
};
// Sort keys (higher is better) used by ORDER BY rewrites.
const VECTOR_KEY = "__am_VectorKey";
// In RRF a FullTextScore of 0 (no term matched) leaves the row unranked.
const TEXT_RANK_KEY = "__am_FullTextRankKey";

function isNumberArray(v) {
  return Array.isArray(v) && v.every(x => typeof x === "number");
}

// distanceFunction from the options object, else the container's
// vectorEmbeddingPolicy for the path, else cosine.
function distanceFunction(path, options) {
  if (options && typeof options === "object" && typeof options.distanceFunction === "string") {
    return options.distanceFunction.toLowerCase();
  }
  const coll = current && current.collection;
  const policy = coll && coll.vectorEmbeddingPolicy;
  const embeddings = (policy && policy.vectorEmbeddings) || [];
  const p = path ? `/${path.join("/")}` : null;
  const e = embeddings.find(x => x && x.path === p);
  return e && typeof e.distanceFunction === "string" ? e.distanceFunction.toLowerCase() : "cosine";
}

function vectorDistance(path, a, b, bruteForce, options) {
  if (!isNumberArray(a) || !isNumberArray(b) || a.length !== b.length || a.length === 0) return undefined;
  const fn = distanceFunction(path, options);
  let dot = 0;
  let na = 0;
  let nb = 0;
  let sq = 0;
  for (let i = 0; i < a.length; i += 1) {
    dot += a[i] * b[i];
    na += a[i] * a[i];
    nb += b[i] * b[i];
    sq += (a[i] - b[i]) ** 2;
  }
  switch (fn) {
    case "cosine":
      return na === 0 || nb === 0 ? 0 : dot / Math.sqrt(na * nb);
    case "dotproduct":
      return dot;
    case "euclidean":
      return Math.sqrt(sq);
    default:
      throw new QuerySyntaxError(`VectorDistance: unknown distanceFunction "${fn}" (cosine, dotproduct, euclidean)`);
  }
}

// Higher is more similar whatever the distance function.
function vectorKey(path, a, b, bruteForce, options) {
  const d = vectorDistance(path, a, b, bruteForce, options);
  if (d === undefined) return undefined;
  return distanceFunction(path, options) === "euclidean" ? -d : d;
}

// A small English stemmer (plural, -ing, -ed, -ly and a few derivational
// suffixes), applied to documents and search terms alike.
function stem(word) {
  let w = word;
  if (w.length <= 3) return w;
  if (w.endsWith("ies") && w.length > 4) w = `${w.slice(0, -3)}y`;
  else if (w.endsWith("sses")) w = w.slice(0, -2);
  else if (w.endsWith("s") && !/(ss|us|is)$/.test(w)) w = w.slice(0, -1);
  if (w.length > 5 && w.endsWith("ing")) w = w.slice(0, -3);
  else if (w.length > 4 && w.endsWith("ed")) w = w.slice(0, -2);
  else if (w.length > 4 && w.endsWith("ly")) w = w.slice(0, -2);
  if (w.length > 6 && /(ment|ness|tion)$/.test(w)) w = w.slice(0, -4);
  if (/([b-df-hj-np-tv-z])\1$/.test(w) && !/(ll|ss|zz)$/.test(w)) w = w.slice(0, -1);
  return w;
}

// English stopwords, dropped from texts and search terms before stemming.
// Cosmos DB documents that its full-text index removes stopwords but not
// which; this is the English list Microsoft documents for its own
// analyzer (Azure AI Search, "Stopwords reference (Microsoft analyzers)",
// en.microsoft), lower-cased: pronouns, common function words and the
// single letters.
const STOPWORDS = new Set(
  (
    "is and in it of the to that this these those was for on be with as by at have are not but had from or " +
    "i my me mine myself you your yours yourself he him his himself she her hers herself its itself " +
    "we our ours ourselves they them their theirs themselves " +
    "a b c d e f g h j k l m n o p q r s t u v w x y z"
  ).split(" ")
);

// The indexed tokens of a text: lower-cased words without the stopwords,
// stemmed.
function tokens(text) {
  return (text.toLowerCase().match(/[\p{L}\p{N}]+/gu) || []).filter(w => !STOPWORDS.has(w)).map(stem);
}

// Text of a property value: a string. An array (of strings or not) is not
// text: the service's full-text functions search a string property, and a
// full-text policy path cannot name array elements (no [] or * wildcards).
function textOf(v) {
  return typeof v === "string" ? v : "";
}

// Search terms: strings or arrays of strings, each tokenised. A term made
// only of stopwords has no tokens, and is kept so: it matches nothing.
function termTokens(terms) {
  const out = [];
  terms.forEach(t => {
    if (Array.isArray(t)) out.push(...termTokens(t));
    else if (typeof t === "string") out.push(tokens(t));
    else throw new QuerySyntaxError("full-text search terms must be strings");
  });
  return out;
}

// A term (possibly several words) is contained when all its words are; a
// term without words (only stopwords) never is.
function containsTerm(docTokens, termToks) {
  return termToks.length > 0 && termToks.every(t => docTokens.has(t));
}

function fullTextContains(mode) {
  return (path, value, ...terms) => {
    if (terms.length === 0) throw new QuerySyntaxError("FullTextContains requires a search term");
    const docTokens = new Set(tokens(textOf(value)));
    const ts = termTokens(terms);
    return mode === "any" ? ts.some(t => containsTerm(docTokens, t)) : ts.length > 0 && ts.every(t => containsTerm(docTokens, t));
  };
}

// BM25 statistics of one property over the documents the query can see
// (its logical partition when the request names one).
function corpusStats(path) {
  const key = JSON.stringify(path);
  if (current.stats.has(key)) return current.stats.get(key);
  const df = new Map();
  let n = 0;
  let total = 0;
  current.docs.forEach(doc => {
    let v = doc;
    (path || []).forEach(k => {
      v = v && typeof v === "object" ? v[k] : undefined;
    });
    const toks = tokens(textOf(v));
    if (toks.length === 0) return;
    n += 1;
    total += toks.length;
    new Set(toks).forEach(t => df.set(t, (df.get(t) || 0) + 1));
  });
  const stats = { n, avgdl: n ? total / n : 0, df };
  current.stats.set(key, stats);
  return stats;
}

function fullTextScore(path, value, ...terms) {
  if (terms.length === 0) throw new QuerySyntaxError("FullTextScore requires a search term");
  if (!current) return 0;
  const docToks = tokens(textOf(value));
  if (docToks.length === 0) return 0;
  const tf = new Map();
  docToks.forEach(t => tf.set(t, (tf.get(t) || 0) + 1));
  const stats = corpusStats(path);
  const queryToks = new Set(termTokens(terms).flat());
  let score = 0;
  queryToks.forEach(t => {
    const f = tf.get(t);
    if (!f) return;
    const df = stats.df.get(t) || 0;
    const idf = Math.log(1 + (stats.n - df + 0.5) / (df + 0.5));
    score += (idf * f * (BM25_K1 + 1)) / (f + BM25_K1 * (1 - BM25_B + (BM25_B * docToks.length) / (stats.avgdl || 1)));
  });
  return score;
}

function installFunctions() {
  const add = (name, fn) => {
    builtins[name.toUpperCase()] = fn;
    if (builtins[name.toUpperCase()] !== fn) throw new Error(`cannot set $b.${name.toUpperCase()}`);
  };
  add(INTERNAL.VECTORDISTANCE, vectorDistance);
  add(VECTOR_KEY, vectorKey);
  add(INTERNAL.FULLTEXTCONTAINS, fullTextContains("all"));
  add(INTERNAL.FULLTEXTCONTAINSALL, fullTextContains("all"));
  add(INTERNAL.FULLTEXTCONTAINSANY, fullTextContains("any"));
  add(INTERNAL.FULLTEXTSCORE, fullTextScore);
  add(TEXT_RANK_KEY, (...args) => {
    const score = fullTextScore(...args);
    return score > 0 ? score : undefined;
  });
}

// ---------------------------------------------------------------------------
// order-by: rewrite the parsed query. Cosmos functions get their internal
// names; every ORDER BY item that is not a plain property path becomes a
// property of an object computed per row by a correlated JOIN subquery
//   FROM c JOIN (SELECT VALUE {"k0": <expr>, ...}) __am_ob ORDER BY __am_ob.k0
// which the stock engine can sort on.

const strConst = value => ({ type: "string_constant", value });
const ident = name => ({ type: "identifier", name });
const member = (object, name) => ({ type: "scalar_member_expression", object: ident(object), property: ident(name), computed: false });

function rootAlias(ast) {
  const from = ast.body && ast.body.from;
  if (!from) return null;
  const { source } = from;
  if (source.alias) return source.alias.name;
  const e = source.expression && source.expression.expression;
  return e && e.type === "identifier" ? e.name : null;
}

// ["a","b"] for c.a.b or c["a"]["b"], else null.
function propertyPath(node, alias) {
  const keys = [];
  let n = node;
  while (n && n.type === "scalar_member_expression") {
    const p = n.property;
    if (p.type === "identifier") keys.unshift(p.name);
    else if (p.type === "string_constant" || p.type === "number_constant") keys.unshift(p.value);
    else return null;
    n = n.object;
  }
  return n && n.type === "identifier" && n.name === alias && keys.length ? keys : null;
}

const fnName = node => node.type === "scalar_function_expression" && !node.udf && node.name.name.toUpperCase();

// Renames the Cosmos functions throughout the tree. FullTextScore is only
// valid under ORDER BY RANK (as in Cosmos DB): inOrderBy says where we are.
function renameFunctions(node, alias, inOrderBy) {
  if (Array.isArray(node)) {
    node.forEach(n => renameFunctions(n, alias, inOrderBy));
    return;
  }
  if (!node || typeof node !== "object") return;
  const name = fnName(node);
  if (name === "RRF" && !inOrderBy) {
    throw new QuerySyntaxError("RRF can only be used in an ORDER BY RANK clause");
  }
  if (name && INTERNAL[name] && !node.__am) {
    if (name === "FULLTEXTSCORE" && !inOrderBy) {
      throw new QuerySyntaxError("FullTextScore can only be used in an ORDER BY RANK clause or as an argument of RRF");
    }
    const path = propertyPath(node.arguments[0], alias);
    node.arguments.unshift({ type: "array_constant", elements: (path || []).map(strConst) });
    node.name = ident(INTERNAL[name]);
    node.__am = name;
  }
  Object.keys(node).forEach(k => {
    if (k !== "__am") renameFunctions(node[k], alias, inOrderBy);
  });
}

// The higher-is-better key of a scoring function, or null.
function scoringKey(node) {
  if (!node || node.type !== "scalar_function_expression") return null;
  if (node.__am === "VECTORDISTANCE") return { ...node, name: ident(VECTOR_KEY) };
  if (node.__am === "FULLTEXTSCORE") return node;
  return null;
}

// The key of an RRF component.
function rrfKey(node) {
  const k = scoringKey(node);
  if (k && node.__am === "FULLTEXTSCORE") return { ...node, name: ident(TEXT_RANK_KEY) };
  return k;
}

function rewriteOrderBy(ast, alias, rank) {
  const orderBy = ast.body.orderBy;
  if (!orderBy) {
    if (rank) throw new QuerySyntaxError("RANK must follow ORDER BY");
    return;
  }
  const props = [];
  orderBy.expressions.forEach((item, i) => {
    const e = item.expression;
    if (!rank && e.type === "scalar_member_expression") return;
    if (!alias) throw new QuerySyntaxError("ORDER BY on an expression needs FROM <container> [alias]");
    let key = `k${i}`;
    let value;
    let order = item.order;
    const name = fnName(e);
    if (name === "RRF") {
      if (!rank) throw new QuerySyntaxError("RRF requires ORDER BY RANK");
      const args = e.arguments.slice();
      let weights = null;
      if (args.length && !fnName(args[args.length - 1])) weights = args.pop();
      if (args.length < 1) throw new QuerySyntaxError("RRF requires scoring functions (VectorDistance, FullTextScore)");
      const keys = args.map(a => {
        const k = rrfKey(a);
        if (!k) throw new QuerySyntaxError("RRF arguments must be VectorDistance or FullTextScore, optionally followed by a weights array");
        return k;
      });
      key = `rrf${i}`;
      value = { type: "scalar_object_expression", properties: [
        { key: strConst("keys"), value: { type: "scalar_array_expression", elements: keys } },
        { key: strConst("weights"), value: weights || { type: "null_constant" } }
      ] };
      order = "DESC";
    } else if (scoringKey(e)) {
      // Cosmos sorts scoring functions best first.
      if (e.__am === "FULLTEXTSCORE" && !rank) throw new QuerySyntaxError("FullTextScore requires ORDER BY RANK");
      value = scoringKey(e);
      order = "DESC";
    } else {
      if (rank) throw new QuerySyntaxError("ORDER BY RANK requires a scoring function: VectorDistance, FullTextScore or RRF");
      value = e;
    }
    props.push({ key: strConst(key), value });
    item.expression = member(OB, key);
    item.order = order;
  });
  if (props.length === 0) return;
  const body = ast.body;
  body.from.joins = body.from.joins || [];
  body.from.joins.push({
    type: "from_source",
    expression: {
      type: "collection_subquery_expression",
      expression: {
        type: "select_query",
        top: null,
        select: { type: "select_specification", value: { type: "scalar_object_expression", properties: props } },
        from: null,
        where: null,
        orderBy: null
      }
    },
    alias: ident(OB)
  });
  // With the JOIN there are two input sets; SELECT * means the document.
  if (body.select["*"]) body.select = { type: "select_specification", value: ident(alias) };
}

// Wraps the package's query factory (called by the server for every query
// text, then cached per text).
const originalFactory = cosmosQuery.default;
function patchedFactory(sql) {
  const pre = preprocess(sql);
  const q = originalFactory(pre.sql);
  const { ast } = q;
  if (ast.body && ast.body.type === "select_query") {
    const alias = rootAlias(ast);
    const { orderBy, ...rest } = ast.body;
    renameFunctions(rest, alias, false);
    if (orderBy) renameFunctions(orderBy, alias, true);
    rewriteOrderBy(ast, alias, pre.rank);
  } else if (pre.rank) {
    throw new QuerySyntaxError("ORDER BY RANK is only valid in a SELECT query");
  }
  q.__am = { offset: pre.offset, limit: pre.limit };
  return q;
}

// The engine's sort helper: computes RRF scores before sorting, and skips
// the composite-index check for computed keys.
const originalSort = helpers.sort;
function patchedSort(collection, getRid, compositeIndexes, ...orders) {
  const computed = orders.some(([keys]) => Array.isArray(keys) && keys[0] === OB);
  if (!computed) return originalSort.call(this, collection, getRid, compositeIndexes, ...orders);
  orders.forEach(([keys]) => {
    if (keys[0] === OB && /^rrf\d+$/.test(keys[1])) fuse(collection, keys[1]);
  });
  return originalSort.call(this, collection, getRid, null, ...orders);
}

// Reciprocal Rank Fusion over rows: each component ranks the rows that have
// a score for it (a FullTextScore of 0, no term matched, counts as none),
// best first, tied scores sharing a rank; the fused score is
// sum(weight / (60 + rank)). Rows ranked by no component get no score and
// are dropped by the sort.
function fuse(rows, key) {
  if (rows.length === 0) return;
  const first = rows[0][OB][key];
  const n = first.keys.length;
  let weights = first.weights;
  if (weights === null || weights === undefined) weights = new Array(n).fill(1);
  if (!isNumberArray(weights) || weights.length !== n) {
    throw new QuerySyntaxError(`RRF weights must be an array of ${n} numbers`);
  }
  const fused = rows.map(() => undefined);
  for (let j = 0; j < n; j += 1) {
    const scores = rows.map(r => r[OB][key].keys[j]);
    const ranked = scores.filter(s => typeof s === "number" && !Number.isNaN(s)).sort((a, b) => b - a);
    // Competition ranking: 1 + the number of strictly better scores.
    const rankOf = new Map();
    ranked.forEach((s, i) => {
      if (!rankOf.has(s)) rankOf.set(s, i + 1);
    });
    scores.forEach((s, i) => {
      if (!rankOf.has(s)) return;
      fused[i] = (fused[i] || 0) + weights[j] / (RRF_K + rankOf.get(s));
    });
  }
  rows.forEach((r, i) => {
    // eslint-disable-next-line no-param-reassign
    r[OB][key] = fused[i];
  });
}

// offset-limit: the engine's paginate helper sees the sorted, projected rows
// of the top-level query.
const originalPaginate = helpers.paginate;
function patchedPaginate(collection, maxItemCount, continuation, getRid, ...orders) {
  const spec = current && current.query && current.query.__am;
  let rows = collection;
  if (spec && spec.offset) {
    const offset = resolveNumber(spec.offset, "OFFSET");
    const limit = resolveNumber(spec.limit, "LIMIT");
    rows = rows.slice(offset, offset + limit);
  }
  return originalPaginate.call(this, rows, maxItemCount, continuation, getRid, ...orders);
}

function resolveNumber(arg, what) {
  let v = arg.value;
  if (arg.param) {
    const p = (current.parameters || []).find(x => x.name === arg.param);
    if (!p) throw new QuerySyntaxError(`${what}: parameter ${arg.param} is not defined`);
    v = p.value;
  }
  if (!Number.isInteger(v) || v < 0) throw new QuerySyntaxError(`${what} must be a non-negative integer`);
  return v;
}

// ---------------------------------------------------------------------------
// partition-scope: Items.prototype.query runs the engine over this._data;
// for a document query under a partition key header, swap in that logical
// partition's documents for the (synchronous) call.

// The partition key header: undefined when absent, NONE for [{}] (documents
// without the key), else the value.
const NONE = Symbol("none");
function headerPartitionKey(req) {
  const raw = req.headers["x-ms-documentdb-partitionkey"];
  if (raw === undefined) return undefined;
  let v;
  try {
    v = JSON.parse(Array.isArray(raw) ? raw[0] : raw);
  } catch (err) {
    return undefined;
  }
  if (Array.isArray(v)) v = v[0];
  if (v && typeof v === "object") return NONE;
  return v;
}

function samePartition(docValue, key) {
  if (key === NONE) return docValue === undefined;
  return docValue !== undefined && JSON.stringify(docValue) === JSON.stringify(key);
}

const originalItemsQuery = Items.prototype.query;
function patchedItemsQuery(params, options) {
  if (!(this instanceof Documents)) return originalItemsQuery.call(this, params, options);
  const scope = requestScope.getStore();
  const all = this._data;
  let data = all;
  if (scope && scope.partitionKey !== undefined && this._partitionKeyPath.length) {
    data = new Map([...all].filter(([, item]) => samePartition(this._getPartition(item.read()), scope.partitionKey)));
  }
  const previous = current;
  current = {
    collection: this._parent.read(),
    docs: [...data.values()].map(item => item.read()),
    parameters: params.parameters,
    query: this._getQuery(params.query),
    stats: new Map()
  };
  this._data = data;
  try {
    return originalItemsQuery.call(this, params, options);
  } finally {
    this._data = all;
    current = previous;
  }
}

// ---------------------------------------------------------------------------
// not-found, http-endpoints, partition-scope (request side): wrap the router
// so each matched handler can be wrapped by identity.

const ERROR_CODES = {
  400: "BadRequest",
  401: "Unauthorized",
  403: "Forbidden",
  404: "NotFound",
  409: "Conflict",
  412: "PreconditionFailed",
  413: "RequestEntityTooLarge",
  429: "TooManyRequests",
  500: "InternalServerError"
};
const NOT_FOUND = { code: "NotFound", message: "Entity with the specified id does not exist in the system." };
const ITEM_HANDLERS = new Set([readDocument, replaceDocument, deleteDocument, patchDocument]);

function itemExists(account, req, { dbId, collId, docId }) {
  const collection = account.database(dbId).collection(collId);
  const coll = collection.read();
  if (!coll) return false;
  const key = headerPartitionKey(req);
  const docs = collection.documents;
  // The stock lookup is keyed on the partition value (the id when the
  // header carries none) and falls back to treating the id as a _rid:
  // check the document really is this id in this partition.
  let pk = key === NONE || key === undefined ? docId : key;
  if (pk === null) pk = docId;
  const doc = collection.document(docId, pk).read();
  if (!doc || doc.id !== docId) return false;
  if (key === undefined || !docs._partitionKeyPath.length) return true;
  return samePartition(docs._getPartition(doc), key);
}

// COSMOSTEST_LOG=1 logs every routed request and its status to stderr.
const logRequests = /^(1|true)$/i.test(process.env.COSMOSTEST_LOG || "");

function wrapHandler(handler) {
  return async (account, req, res, params) => {
    if (logRequests) {
      const pk = req.headers["x-ms-documentdb-partitionkey"];
      res.once("finish", () => process.stderr.write(`cosmostest: ${req.method} ${req.url}${pk ? ` pk=${pk}` : ""} -> ${res.statusCode}\n`));
    }
    if (ITEM_HANDLERS.has(handler) && !itemExists(account, req, params)) {
      res.statusCode = 404;
      return { ...NOT_FOUND };
    }
    let body;
    if (provisioning.handles(handler)) {
      body = await provisioning.serve(handler, account, req, res, params);
    } else if (handler === queryDocuments) {
      // A query under a partition key is served from that partition, so the
      // stock check that the WHERE clause names the key does not apply.
      if (headerPartitionKey(req) !== undefined) req.headers["x-ms-documentdb-query-enablecrosspartition"] = "true";
      body = await requestScope.run({ partitionKey: headerPartitionKey(req) }, () => handler(account, req, res, params));
    } else {
      body = await handler(account, req, res, params);
    }
    if (handler === readMeta && body) body = httpEndpoints(body);
    if (res.statusCode >= 400 && body && typeof body === "object" && !body.code) {
      body.code = ERROR_CODES[res.statusCode] || "Error";
    }
    return body;
  };
}

function httpEndpoints(account) {
  const fix = locs => (locs || []).map(l => ({ ...l, databaseAccountEndpoint: String(l.databaseAccountEndpoint).replace(/^https:/, "http:") }));
  return { ...account, writableLocations: fix(account.writableLocations), readableLocations: fix(account.readableLocations) };
}

const originalRouter = routes.default;
function patchedRouter(req) {
  const route = originalRouter(req);
  if (!route) return route;
  const [params, handler] = route;
  return [params, wrapHandler(handler)];
}

// ---------------------------------------------------------------------------
// Install, self-check, serve.

function installPatches() {
  const check = (patch, ok, what) => {
    if (!ok) throw new Error(`patch ${patch}: ${what}`);
  };
  check("query-syntax", typeof cosmosQuery.default === "function" && typeof QuerySyntaxError === "function", "@zeit/cosmosdb-query default export or SyntaxError missing");
  check("functions", builtins && typeof builtins.ABS === "function", "@zeit/cosmosdb-query/lib/builtin-functions has no ABS");
  check("order-by", typeof helpers.sort === "function", "helpers.sort missing");
  check("offset-limit", typeof helpers.paginate === "function", "helpers.paginate missing");
  check("partition-scope", typeof Items.prototype.query === "function" && typeof Items.prototype._getQuery === "function" && Documents.prototype instanceof Items, "Items.prototype.query/_getQuery missing");
  check("not-found", typeof routes.default === "function", "routes default export missing");
  check("not-found", [queryDocuments, readDocument, replaceDocument, deleteDocument, patchDocument, readMeta].every(h => typeof h === "function"), "a handler module is missing");
  check("http-endpoints", typeof cosmosServer.createHttpServer === "function", "createHttpServer missing");

  // Assign a wrapper and read it back: a frozen or getter-only export
  // (e.g. after a move to ES modules) fails here, naming the patch.
  const install = (patch, obj, prop, value) => {
    try {
      // eslint-disable-next-line no-param-reassign
      obj[prop] = value;
    } catch (err) {
      throw new Error(`patch ${patch}: cannot replace ${prop}: ${err.message}`);
    }
    check(patch, obj[prop] === value, `${prop} is not writable`);
  };
  try {
    installFunctions();
  } catch (err) {
    throw new Error(`patch functions: ${err.message}`);
  }
  install("query-syntax", cosmosQuery, "default", patchedFactory);
  install("order-by", helpers, "sort", patchedSort);
  install("offset-limit", helpers, "paginate", patchedPaginate);
  install("partition-scope", Items.prototype, "query", patchedItemsQuery);
  install("not-found", routes, "default", patchedRouter);
}

function parseArgs(argv) {
  const opts = { port: Number(process.env.COSMOSTEST_PORT || 0), exitOnStdinClose: false, without: [], selfCheck: true };
  for (let i = 0; i < argv.length; i += 1) {
    if (argv[i] === "--port" || argv[i] === "-p") opts.port = Number(argv[(i += 1)]);
    else if (argv[i] === "--exit-on-stdin-close") opts.exitOnStdinClose = true;
    else if (argv[i] === "--without-capability") opts.without.push(argv[(i += 1)]);
    else if (argv[i] === "--skip-self-check") opts.selfCheck = false;
    else if (argv[i] === "--no-ssl") ; // always plain HTTP
    else {
      process.stderr.write(`cosmostest: unknown argument ${argv[i]}\n`);
      process.exit(2);
    }
  }
  if (!Number.isInteger(opts.port) || opts.port < 0 || opts.port > 65535) {
    process.stderr.write("cosmostest: --port must be 0..65535\n");
    process.exit(2);
  }
  return opts;
}

async function main() {
  const opts = parseArgs(process.argv.slice(2));
  try {
    installPatches();
  } catch (err) {
    process.stderr.write(`cosmostest: SELF-CHECK FAILED: ${err.message}\n(a package update broke a run-time patch in launcher.js)\n`);
    process.exit(3);
  }
  const server = cosmosServer.createHttpServer({ keepAlive: true });
  // Keep idle connections longer than Go's transport does (90s), so the
  // client, not the server, closes them.
  server.keepAliveTimeout = 120e3;
  server.headersTimeout = 125e3;
  await new Promise((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port, "127.0.0.1", resolve);
  });
  const { port } = server.address();
  const endpoint = `http://127.0.0.1:${port}`;
  try {
    if (opts.selfCheck) {
      await require("./selfcheck").run(endpoint);
      await provisioning.selfcheck((method, path, o) => require("./selfcheck").request(endpoint, method, path, o));
    }
  } catch (err) {
    process.stderr.write(`cosmostest: SELF-CHECK FAILED: ${err.message}\n(a package update broke a run-time patch in launcher.js)\n`);
    process.exit(3);
  }
  // The account's capabilities apply once the self-checks have passed.
  try {
    provisioning.configure({ without: opts.without });
  } catch (err) {
    process.stderr.write(`cosmostest: --without-capability: ${err.message}\n`);
    process.exit(2);
  }
  process.stdout.write(`LISTENING ${endpoint}\n`);
  const stop = () => {
    server.close();
    process.exit(0);
  };
  process.on("SIGTERM", stop);
  process.on("SIGINT", stop);
  if (opts.exitOnStdinClose) {
    process.stdin.on("end", stop);
    process.stdin.on("error", stop);
    process.stdin.resume();
  }
}

module.exports = { preprocess, stem, tokens, vectorDistance, RRF_K };

if (require.main === module) {
  main().catch(err => {
    process.stderr.write(`cosmostest: ${err.stack || err}\n`);
    process.exit(1);
  });
}
