package cloudprovider

import (
	"errors"
	"fmt"
)

// InsufficientCapacityError says that no offering a NodeClaim allows has capacity right now (for example, spot
// capacity is unavailable in the zone). The provisioner marks the offerings unavailable for a while and
// solves again.
type InsufficientCapacityError struct {
	// InstanceType, CapacityType and Zone name the offering that failed; empty when the error covers several.
	InstanceType, CapacityType, Zone string
	// Err is the provider's underlying error, if any.
	Err error
}

// NewInsufficientCapacityError returns an *InsufficientCapacityError for one offering.
func NewInsufficientCapacityError(instanceType, capacityType, zone string, err error) *InsufficientCapacityError {
	return &InsufficientCapacityError{InstanceType: instanceType, CapacityType: capacityType, Zone: zone, Err: err}
}

// Error describes the offering and the underlying error.
func (e *InsufficientCapacityError) Error() string {
	msg := "insufficient capacity"
	if o := offering(e.InstanceType, e.CapacityType, e.Zone); o != "" {
		msg += " for " + o
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *InsufficientCapacityError) Unwrap() error { return e.Err }

// IsInsufficientCapacity reports whether err, or an error it wraps, is an *InsufficientCapacityError.
func IsInsufficientCapacity(err error) bool {
	var target *InsufficientCapacityError
	return errors.As(err, &target)
}

// NodeClaimNotFoundError says that the instance behind a NodeClaim (or providerID) does not exist.
type NodeClaimNotFoundError struct {
	// ProviderID is the instance that was looked for; it may be empty when the claim had none yet.
	ProviderID string
	// Err is the provider's underlying error, if any.
	Err error
}

// NewNodeClaimNotFoundError returns a *NodeClaimNotFoundError for providerID.
func NewNodeClaimNotFoundError(providerID string, err error) *NodeClaimNotFoundError {
	return &NodeClaimNotFoundError{ProviderID: providerID, Err: err}
}

// Error names the missing instance and the underlying error.
func (e *NodeClaimNotFoundError) Error() string {
	msg := "nodeclaim not found"
	if e.ProviderID != "" {
		msg = fmt.Sprintf("nodeclaim with providerID %q not found", e.ProviderID)
	}
	if e.Err != nil {
		msg += ": " + e.Err.Error()
	}
	return msg
}

// Unwrap returns the underlying error.
func (e *NodeClaimNotFoundError) Unwrap() error { return e.Err }

// IsNodeClaimNotFound reports whether err, or an error it wraps, is a *NodeClaimNotFoundError.
func IsNodeClaimNotFound(err error) bool {
	var target *NodeClaimNotFoundError
	return errors.As(err, &target)
}

// IgnoreNodeClaimNotFound returns nil for a *NodeClaimNotFoundError (wrapped or not) and err otherwise, for
// callers to whom an instance that is already gone is success.
func IgnoreNodeClaimNotFound(err error) error {
	if IsNodeClaimNotFound(err) {
		return nil
	}
	return err
}

// offering formats the non-empty parts of an offering as type/capacity-type/zone.
func offering(instanceType, capacityType, zone string) string {
	s := ""
	for _, part := range []string{instanceType, capacityType, zone} {
		if part == "" {
			continue
		}
		if s != "" {
			s += "/"
		}
		s += part
	}
	return s
}
