//go:build !cgo

package highs

import (
	"context"
	"errors"
	"testing"
)

func TestUnavailableWithoutCgo(t *testing.T) {
	if Available() {
		t.Fatal("Available() = true without cgo")
	}
	if _, err := Solve(context.Background(), &Model{}, Options{}, nil); !errors.Is(err, ErrUnavailable) {
		t.Fatalf("Solve() error = %v, want ErrUnavailable", err)
	}
}
