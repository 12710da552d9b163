// Package doctest checks the repository's documentation: every Go snippet
// in README.md and docs/*.md compiles against this module, every shell,
// JavaScript and Go program snippet runs against a real agentmemory-server,
// every relative link points to a file that exists, and README.md links
// every page of docs/.
//
// It holds no code of its own; its tests are the checks.
//
// # Blocks and the norun marker
//
// A fenced block's info string is its language, optionally followed by
// norun: ```sh norun. Any other word in it fails the test, so that a
// misspelt marker is not taken for a block that runs. What the tests do
// with a block depends on its language:
//
//   - go: a whole Go file, with a package clause and the imports it uses,
//     so a reader can copy it as it stands. Every go block compiles: the
//     test writes it into a directory of its own inside the module that
//     builds it (integrations/adk when it imports that module, the root
//     module otherwise), runs go vet on it and removes the directory. A
//     block of package main is a program, and it also runs, unless it is
//     fenced norun.
//   - sh, bash, shell: run with bash -euo pipefail, unless fenced norun.
//   - js, javascript: a whole ES module (imports and top-level await),
//     run with node, unless fenced norun. It may import the npm packages
//     installed in cmd/agentmemory-server/e2e (@azure/ai-projects, openai,
//     @modelcontextprotocol/sdk).
//   - anything else (Python, YAML, output examples fenced without a
//     language) is not run.
//
// norun is for what cannot run in a test: set-up commands (starting the
// server, go test, go run ./demo), commands that need a real model,
// another machine or hours, and programs that need credentials. A block
// that could run is not fenced norun.
//
// # Running against the server
//
// TestSnippetsRun builds cmd/agentmemory-server once, and the Go program
// blocks beside it. Each page's blocks run in order, as a reader would run
// them, against a server of the page's own: an API key, the offline
// models, a SQLite file in a temporary directory, and the OpenAI-compatible
// gateway in front of a scripted model endpoint (package fakeopenai). A
// block reaches the server at $AGENTMEMORY_URL (https) with the key
// $AGENTMEMORY_KEY, the names the docs use; the certificate is trusted
// through CURL_CA_BUNDLE, NODE_EXTRA_CA_CERTS and SSL_CERT_FILE. Between
// the blocks and the server a proxy records every exchange. A block
// passes when it exits with success and the server answered each of its
// requests with a success (curl -s exits 0 on a 404); a shell or
// JavaScript block must also have made one request at least, since one
// that talks to no server is set-up and is fenced norun. Blocks that need
// Node.js, its packages, bash or curl skip with a clear message when they
// are missing, and fail when CI is set.
//
// # Links
//
// A relative link names a file in the repository, without an anchor;
// links to other sites (http, https, mailto) are not followed. README.md
// is the front door: it links every page of docs/.
package doctest
