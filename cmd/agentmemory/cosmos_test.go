package main

import (
	"maps"
	"testing"

	"github.com/stretchr/testify/assert"

	"github.com/agentmemory/agentmemory/internal/cosmostest"
)

func TestMain(m *testing.M) { cosmostest.Main(m) }

// TestWithoutServer: without the Cosmos test server's npm packages the
// Cosmos checks skip, saying why once; in CI they fail.
func TestWithoutServer(t *testing.T) {
	cosmostest.CheckWithoutServer(t, "TestCheckCosmos")
}

// cosmosEnv adds to env the variables that select the Cosmos account at
// endpoint, with a database of t's own, deleted when t ends on the shared
// server (an account of NewAccount goes with its server).
func cosmosEnv(t *testing.T, env map[string]string, endpoint string) map[string]string {
	env = maps.Clone(env)
	db := cosmostest.DatabaseName(t)
	if endpoint == cosmostest.Endpoint(t) {
		db = cosmostest.DatabaseFor(t)
	}
	env["AZURE_COSMOS_ENDPOINT"], env["AZURE_COSMOS_KEY"], env["AZURE_COSMOS_DATABASE"] = endpoint, cosmostest.Key, db
	return env
}

// TestCheckCosmos: `agentmemory check` on Azure Cosmos DB (the test
// server) reports the account's vector and full-text search, and names the
// missing capability with its fix.
func TestCheckCosmos(t *testing.T) {
	cosmostest.Endpoint(t) // skips as a whole without the server
	_, env := lexicalServer(t)

	t.Run("Capable", func(t *testing.T) {
		code, out, errOut := runCmd(t, cosmosEnv(t, env, cosmostest.Endpoint(t)), "check")
		assert.Equal(t, exitOK, code, "%s\n%s", out, errOut)
		assert.Contains(t, out, "ok    vector search      every container has a vector embedding policy and quantizedFlat vector indexes")
		assert.Contains(t, out, "ok    full-text search")
	})
	t.Run("WithoutVectorSearch", func(t *testing.T) {
		endpoint := cosmostest.NewAccount(t, cosmostest.Account{Without: []string{cosmostest.CapabilityVectorSearch}})
		code, out, _ := runCmd(t, cosmosEnv(t, env, endpoint), "check")
		assert.Equal(t, exitFailed, code)
		assert.Contains(t, out, "fail  vector search      cosmos: the account does not have NoSQL vector search (capability EnableNoSQLVectorSearch)")
		assert.Contains(t, out, "`az cosmosdb update --resource-group <resource-group> --name <account> --capabilities EnableNoSQLVectorSearch`")
		assert.Contains(t, out, "result: 1 check(s) failed: store: vector search")
	})
}
