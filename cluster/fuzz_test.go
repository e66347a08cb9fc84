package cluster

import (
	"bytes"
	"strings"
	"testing"

	"github.com/packwright/packwright/catalog"
)

// FuzzReadSnapshot feeds arbitrary bytes to ReadSnapshot and converts whatever it accepts with Problem and
// ConsolidationInput: none may panic, and an accepted snapshot must convert into problems that validate (Problem
// reports an "internal error" otherwise). The seed corpus in testdata/fuzz/FuzzReadSnapshot covers each accepted
// kind and input format; the large sample snapshot is left out because mutating a 50 KB input is slow
// (TestSampleSnapshot covers it).
func FuzzReadSnapshot(f *testing.F) {
	// A small synthetic catalog keeps each run fast; the problem shape does not depend on the catalog's size.
	cat := catalog.KwokLike()
	f.Fuzz(func(t *testing.T, data []byte) {
		s, err := ReadSnapshot(bytes.NewReader(data))
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		if s == nil {
			t.Fatal("nil State without error")
		}
		_, _, err = s.Problem(cat, ProblemOptions{})
		if err != nil && strings.Contains(err.Error(), "internal error") {
			t.Fatalf("accepted snapshot converts to an invalid problem: %v", err)
		}
		if err != nil {
			return
		}
		// Consolidation input from an accepted snapshot must validate too, every movable pod on a candidate.
		in, _, _, err := s.ConsolidationInput(cat, ProblemOptions{})
		if err != nil {
			t.Fatalf("ConsolidationInput fails where Problem succeeds: %v", err)
		}
		if err := in.Problem.Validate(); err != nil {
			t.Fatalf("consolidation problem does not validate: %v", err)
		}
		for ref, ci := range in.Origin {
			if ci < 0 || ci >= len(in.Candidates) {
				t.Fatalf("pod %s: candidate %d of %d", ref, ci, len(in.Candidates))
			}
		}
	})
}
