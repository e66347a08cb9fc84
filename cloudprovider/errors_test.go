package cloudprovider

import (
	"errors"
	"fmt"
	"io"
	"testing"
)

func TestIsInsufficientCapacity(t *testing.T) {
	ice := NewInsufficientCapacityError("m5.large", "spot", "us-east-1a", io.EOF)
	for _, tc := range []struct {
		name string
		err  error
		want bool
	}{
		{"nil", nil, false},
		{"plain", errors.New("boom"), false},
		{"direct", ice, true},
		{"wrapped", fmt.Errorf("launching nodeclaim default-abc: %w", ice), true},
		{"joined", errors.Join(io.ErrUnexpectedEOF, ice), true},
		{"not found", NewNodeClaimNotFoundError("sim://n", nil), false},
	} {
		if got := IsInsufficientCapacity(tc.err); got != tc.want {
			t.Errorf("%s: IsInsufficientCapacity(%v) = %v, want %v", tc.name, tc.err, got, tc.want)
		}
	}
	if !errors.Is(ice, io.EOF) {
		t.Errorf("InsufficientCapacityError does not unwrap to its cause")
	}
}

func TestInsufficientCapacityErrorMessage(t *testing.T) {
	for _, tc := range []struct {
		err  *InsufficientCapacityError
		want string
	}{
		{&InsufficientCapacityError{}, "insufficient capacity"},
		{NewInsufficientCapacityError("m5.large", "spot", "", nil), "insufficient capacity for m5.large/spot"},
		{NewInsufficientCapacityError("", "spot", "us-east-1a", errors.New("no spot")), "insufficient capacity for spot/us-east-1a: no spot"},
	} {
		if got := tc.err.Error(); got != tc.want {
			t.Errorf("Error() = %q, want %q", got, tc.want)
		}
	}
}

func TestNodeClaimNotFound(t *testing.T) {
	nf := NewNodeClaimNotFoundError("sim://node-a", errors.New("nodes \"node-a\" not found"))
	if got, want := nf.Error(), `nodeclaim with providerID "sim://node-a" not found: nodes "node-a" not found`; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	if got, want := (&NodeClaimNotFoundError{}).Error(), "nodeclaim not found"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	wrapped := fmt.Errorf("deleting: %w", nf)
	if !IsNodeClaimNotFound(wrapped) || IsNodeClaimNotFound(errors.New("x")) || IsNodeClaimNotFound(nil) {
		t.Errorf("IsNodeClaimNotFound misclassifies")
	}
	if IsNodeClaimNotFound(NewInsufficientCapacityError("a", "", "", nil)) {
		t.Errorf("an InsufficientCapacityError is not a NodeClaimNotFoundError")
	}
	if err := IgnoreNodeClaimNotFound(wrapped); err != nil {
		t.Errorf("IgnoreNodeClaimNotFound(not found) = %v, want nil", err)
	}
	other := errors.New("throttled")
	if err := IgnoreNodeClaimNotFound(other); err != other {
		t.Errorf("IgnoreNodeClaimNotFound(other) = %v, want %v", err, other)
	}
}
