// Package ident holds the one rule for the ids agentmemory accepts (user,
// session and document ids), shared by the agent and the stores so that an
// id valid in one is valid in the other, Cosmos DB included.
package ident

import (
	"errors"
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"
)

// MaxLen is the longest id accepted, in bytes: a limit of agentmemory's own,
// which leaves room for the prefixes and suffixes the stores add within
// Cosmos DB's 1,023 bytes for an id.
const MaxLen = 255

// ReservedUserID is the one id that is valid as an id but never as a user
// id: stores keep their deletion log, which spans users, under it (see
// package store's DeletionLogPartition).
const ReservedUserID = "agentmemory.deletion-log"

// CheckUser is Check for a user id: it also refuses ReservedUserID.
func CheckUser(id string) error {
	if err := Check(id); err != nil {
		return err
	}
	if id == ReservedUserID {
		return fmt.Errorf("%q is reserved", id)
	}
	return nil
}

// Check returns nil if id is usable: not blank, at most MaxLen bytes, valid
// UTF-8, without control characters or the characters '/', '\\', '?' and
// '#' that Cosmos DB forbids in ids.
func Check(id string) error {
	if strings.TrimSpace(id) == "" {
		return errors.New("empty")
	}
	if len(id) > MaxLen {
		return fmt.Errorf("%d bytes, at most %d", len(id), MaxLen)
	}
	if !utf8.ValidString(id) {
		return errors.New("not valid UTF-8")
	}
	for _, r := range id {
		if forbidden(r) {
			return fmt.Errorf("%q contains %q", id, r)
		}
	}
	return nil
}

// forbidden reports whether an id may not contain r: a control character
// or one of / \ ? # (Cosmos DB refuses them in ids). Every id a store
// touches goes through it, so ASCII is decided without a table lookup.
func forbidden(r rune) bool {
	if r < utf8.RuneSelf {
		return r < 0x20 || r == 0x7f || r == '/' || r == '\\' || r == '?' || r == '#'
	}
	return unicode.IsControl(r)
}
