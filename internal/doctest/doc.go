// Package doctest checks the repository's documentation: every Go snippet
// in README.md and docs/*.md compiles against this module, every relative
// link in them points to a file that exists, and README.md links every
// page of docs/.
//
// It holds no code of its own; its tests are the checks.
//
// # Snippets
//
// A ```go fenced block is a whole Go file: it has a package clause and
// imports what it uses, so a reader can copy it as it stands. The test
// writes each block into a directory of its own inside the module that
// builds it (integrations/adk when the block imports that module, the root
// module otherwise), runs go vet on it and removes the directory. A block
// that is not meant to compile is not fenced as go. Shell, JavaScript and
// other blocks are not checked.
//
// # Links
//
// A relative link names a file in the repository, without an anchor;
// links to other sites (http, https, mailto) are not followed. README.md
// is the front door: it links every page of docs/.
package doctest
