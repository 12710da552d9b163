package memoryservice

import (
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"regexp"
	"strings"
	"unicode/utf8"

	"github.com/agentmemory/agentmemory/internal/ident"
	"github.com/agentmemory/agentmemory/store"
)

// RegistryUserID is the user id under which the service keeps its own
// records in the store: the memory store definitions here, and each
// store's scopes, each scope's update operations and the markers of the
// updates not yet finished in partitions whose user ids start with it
// (see scopesUser). No scope maps to any of them (scope user ids start
// with ScopePrefix).
const RegistryUserID = "agentmemory.memory-service"

// ScopePrefix starts the user id of every scope: UserID(name, scope) is
// ScopePrefix + name + ":" + scope. Store names cannot hold ':', so the
// pair is read back unambiguously and two stores never share a user.
const ScopePrefix = "mstore:"

// MaxNameLen caps a memory store's name.
const MaxNameLen = 63

var nameRE = regexp.MustCompile(`^[A-Za-z0-9][A-Za-z0-9_-]*$`)

// checkName validates a memory store name: letters, digits, '-' and '_',
// starting with a letter or digit, at most MaxNameLen characters.
func checkName(param, name string) error {
	switch {
	case name == "":
		return badRequest(param, "required")
	case len(name) > MaxNameLen:
		return badRequest(param, "%d characters, at most %d", len(name), MaxNameLen)
	case !nameRE.MatchString(name):
		return badRequest(param, "%q: only letters, digits, '-' and '_', starting with a letter or digit", name)
	}
	return nil
}

// UserID returns the agentmemory user id of a scope of memory store name.
func UserID(name, scope string) string { return ScopePrefix + name + ":" + scope }

// scopeUser validates scope for memory store name and returns its user id.
func scopeUser(name, scope string) (string, error) {
	if strings.TrimSpace(scope) == "" {
		return "", badRequest("scope", "required")
	}
	if !utf8.ValidString(scope) || strings.ContainsRune(scope, utf8.RuneError) {
		// JSON decoding turns bytes that are not UTF-8 (and lone
		// surrogates) into U+FFFD: two scopes would become one.
		return "", badRequest("scope", "not valid UTF-8 (or holds U+FFFD, the replacement character)")
	}
	u := UserID(name, scope)
	if err := ident.CheckUser(u); err != nil {
		return "", badRequest("scope", "not usable as a scope (%v); at most %d bytes, without control characters or / \\ ? #", err, ident.MaxLen-len(ScopePrefix)-len(name)-1)
	}
	return u, nil
}

// Memory item ids carry their scope, since the item operations take none:
// kind letter, '.', the scope and the document id in unpadded base64url.
const (
	itemProfile    = "p" // an insight or the long-term profile (user_profile)
	itemSummary    = "s" // a session summary (chat_summary)
	itemProcedural = "r" // an insight of ProceduralCategory (procedural)
)

func itemID(letter, scope, docID string) string {
	enc := base64.RawURLEncoding
	return letter + "." + enc.EncodeToString([]byte(scope)) + "." + enc.EncodeToString([]byte(docID))
}

// parseItemID reads an item id back; ok is false for anything malformed.
func parseItemID(id string) (letter, scope, docID string, ok bool) {
	parts := strings.Split(id, ".")
	if len(parts) != 3 || (parts[0] != itemProfile && parts[0] != itemSummary && parts[0] != itemProcedural) {
		return "", "", "", false
	}
	enc := base64.RawURLEncoding
	sc, err1 := enc.DecodeString(parts[1])
	doc, err2 := enc.DecodeString(parts[2])
	if err1 != nil || err2 != nil || store.CheckID("id", string(doc)) != nil {
		return "", "", "", false
	}
	return parts[0], string(sc), string(doc), true
}

// The registry's partitions: the user ids its records are kept under, so
// that each read lists only the records it is about. Every one starts
// with RegistryUserID, so none is a scope's (those start with
// ScopePrefix).
//
//   - RegistryUserID: the memory store definitions (and update records
//     written before updates had partitions of their own, until retired);
//   - scopesUser(name): the scope records of memory store name;
//   - updatesUser(hash): the update records of the scope of that hash
//     (scopeHash), which every new update id carries;
//   - activeUser: a marker per update not yet finished, so a restart
//     finds them with one read.
func scopesUser(name string) string  { return RegistryUserID + ".scopes." + name }
func updatesUser(hash string) string { return RegistryUserID + ".updates." + hash }

const activeUser = RegistryUserID + ".active"

// scopeHash names a scope of memory store name without its text.
func scopeHash(name, scope string) string {
	h := sha256.Sum256([]byte(name + "\x00" + scope))
	return hex.EncodeToString(h[:16])
}

// updateIDPrefix starts every update id; a new id then has the scope's
// hash and 16 random hex digits, an older one 24 random hex digits.
const updateIDPrefix = "memupd_"

// newUpdateID returns a new id for an update of a scope.
func newUpdateID(name, scope string) string {
	var b [8]byte
	_, _ = rand.Read(b[:])
	return updateIDPrefix + scopeHash(name, scope) + hex.EncodeToString(b[:])
}

// updateHome returns the partition of update id's record: its scope's for
// an id that carries the scope's hash, RegistryUserID for an older one.
func updateHome(id string) string {
	rest, ok := strings.CutPrefix(id, updateIDPrefix)
	if ok && len(rest) == 32+16 && isHex(rest) {
		return updatesUser(rest[:32])
	}
	return RegistryUserID
}

func isHex(s string) bool {
	for _, c := range s {
		if (c < '0' || c > '9') && (c < 'a' || c > 'f') {
			return false
		}
	}
	return true
}

// recKey addresses a registry record: its partition and document id.
type recKey struct{ user, id string }

func storeKey(name string) recKey { return recKey{RegistryUserID, "store." + name} }
func updateKey(id string) recKey  { return recKey{updateHome(id), "update." + id} }
func activeKey(id string) recKey  { return recKey{activeUser, "update." + id} }
func scopeKey(name, scope string) recKey {
	return recKey{scopesUser(name), scopeDocID(name, scope)}
}

// scopeDocID is the document id of a scope's record.
func scopeDocID(name, scope string) string { return "scope." + name + "." + scopeHash(name, scope) }
