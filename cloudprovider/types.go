// Package cloudprovider is the seam between Packwright's controllers and the machines they launch: the
// nodeclaim lifecycle controller turns a NodeClaim into an instance through a CloudProvider, and garbage
// collection lists the instances to find those without a NodeClaim. The interface follows the spirit of
// Karpenter's pkg/cloudprovider, reduced to what Packwright's controllers call.
package cloudprovider

import (
	"context"

	v1 "github.com/packwright/packwright/api/v1"
)

// CloudProvider launches, finds and terminates the instances behind NodeClaims. Implementations must be safe
// for concurrent use.
type CloudProvider interface {
	// Create launches an instance that satisfies the claim and returns a copy of the claim whose status carries
	// the instance's providerID, capacity and allocatable, and whose labels carry what the launch resolved
	// (instance type, capacity type, zone). Creating the same claim twice launches one instance. A claim that no
	// offering can satisfy right now fails with an *InsufficientCapacityError.
	Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error)
	// Delete terminates the claim's instance. An instance that is already gone yields a
	// *NodeClaimNotFoundError, which callers usually treat as success (see IgnoreNodeClaimNotFound).
	Delete(ctx context.Context, claim *v1.NodeClaim) error
	// Get returns the claim as the provider sees the instance with the given providerID, or a
	// *NodeClaimNotFoundError.
	Get(ctx context.Context, providerID string) (*v1.NodeClaim, error)
	// List returns one claim for every instance the provider manages.
	List(ctx context.Context) ([]*v1.NodeClaim, error)
	// Name is the provider's short name, such as "aws" or "sim".
	Name() string
}
