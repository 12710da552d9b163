// Package inspector shows what agentmemory remembers, in a web browser:
// an http.Handler of server-rendered pages over the memory stores of a
// memoryservice.Service, which cmd/agentmemory-server serves at
// /inspector/. For one scope of a memory store (a user of the
// OpenAI-compatible gateway is a scope of the gateway's store) it shows
// the long-term profile and the insights it folded in, every insight with
// its category, confidence, importance, what superseded it and its
// sources, the sessions with their summaries and turns, the interactions
// with their metadata, the deletion log's records with their receipts
// and the chain's verification, what retrieval returns for a question,
// and the latency and tokens of recent updates; each item links to what
// it came from and to what came from it.
//
// # Pages
//
// Pages are rendered by html/template, with their stylesheet embedded in
// the binary: nothing is fetched at run time and no page runs script.
// Plots are inline SVG (package inspector/plot). Lists are paginated, so
// a scope of any size answers quickly: a page starts after the last row
// of the page before, named by the keys the store orders the list by
// (its time, then id), so rows that share a time are each listed once.
//
// # Signing in
//
// A browser cannot add an Authorization header to a page it navigates
// to, so a server with API keys asks for one on a sign-in page and keeps
// it in an HttpOnly, SameSite=Strict cookie, Secure when the browser is
// on HTTPS (memoryservice.Service.PublicScheme: the server's own TLS, or
// a TLS proxy's forwarded headers when the service trusts them). Each
// request checks it as the API checks its keys: a key limited to some
// memory stores sees only those, and any other store's pages answer 403.
// A server without keys answers only on loopback, without signing in.
//
// # Actions
//
// A user can forget an insight, a session or the whole scope (each after
// a confirmation page), see the forget's receipt in the deletion log,
// and download the scope's export as JSON lines. Actions are POST forms;
// the service's browser guard (memoryservice.Service.GuardPages) refuses
// a cross-origin POST, so no other web page can make a browser forget
// anything, with or without keys; and another site's page may link to
// the inspector but not load its pages as resources (a cross-site request
// that is not a navigation is refused), since a search spends the
// model's tokens.
package inspector
