package cluster

import (
	"bytes"
	"strings"
	"testing"

	"github.com/packwright/packwright/catalog"
)

// FuzzReadSnapshot feeds arbitrary bytes to ReadSnapshot and converts whatever it accepts: neither may panic,
// and an accepted snapshot must convert into a problem that validates (Problem reports an "internal error"
// otherwise). The seed corpus in testdata/fuzz/FuzzReadSnapshot covers each accepted kind and input format;
// the large sample snapshot is left out because mutating a 50 KB input is slow (TestSampleSnapshot covers it).
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
	})
}
