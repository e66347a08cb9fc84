package v1

import (
	"fmt"
	"strconv"
	"strings"
)

// Annotations that carry a provisioning decision on a NodeClaim.
const (
	// OfferingsAnnotationKey lists, in order of preference, the offerings a cloud provider may launch for the
	// claim: the one the solver chose first, then its fallbacks. See FormatOfferings for the syntax. The claim's
	// requirements cover every offering listed, so a provider that ignores the annotation still launches
	// something the plan allows.
	OfferingsAnnotationKey = GroupName + "/offerings"
	// PodsAnnotationKey is how many pending pods the plan put on the claim's node, for events and audits.
	PodsAnnotationKey = GroupName + "/planned-pods"
	// ClusterTagKey tags every cloud instance with the name of the cluster that launched it; garbage
	// collection only ever terminates instances carrying its own cluster's tag.
	ClusterTagKey = GroupName + "/cluster"
	// NodeClaimTagKey tags every cloud instance with the name of its NodeClaim, so that a retried launch finds
	// the instance instead of launching another.
	NodeClaimTagKey = GroupName + "/nodeclaim"
	// NodePoolTagKey tags every cloud instance with the name of its NodePool.
	NodePoolTagKey = GroupName + "/nodepool"
)

// OfferingRef names one launchable offering: an instance type in a zone with a capacity type, and its hourly
// price as the plan saw it.
type OfferingRef struct {
	InstanceType string
	Zone         string
	CapacityType string
	Price        float64
}

// String formats the offering as instance-type/zone/capacity-type/price.
func (o OfferingRef) String() string {
	return fmt.Sprintf("%s/%s/%s/%s", o.InstanceType, o.Zone, o.CapacityType, strconv.FormatFloat(o.Price, 'g', -1, 64))
}

// FormatOfferings formats offerings for OfferingsAnnotationKey: a comma-separated list of
// instance-type/zone/capacity-type/price, such as "m5.large/us-east-1a/spot/0.035,m5.large/us-east-1a/on-demand/0.096".
func FormatOfferings(offerings []OfferingRef) string {
	parts := make([]string, len(offerings))
	for i, o := range offerings {
		parts[i] = o.String()
	}
	return strings.Join(parts, ",")
}

// ParseOfferings parses the value of OfferingsAnnotationKey. An empty value yields no offerings.
func ParseOfferings(s string) ([]OfferingRef, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, nil
	}
	var out []OfferingRef
	for i, part := range strings.Split(s, ",") {
		f := strings.Split(strings.TrimSpace(part), "/")
		if len(f) != 4 || f[0] == "" || f[1] == "" || f[2] == "" {
			return nil, fmt.Errorf("offering %d %q: want instance-type/zone/capacity-type/price", i+1, part)
		}
		price, err := strconv.ParseFloat(f[3], 64)
		if err != nil || price < 0 {
			return nil, fmt.Errorf("offering %d %q: price %q is not a non-negative number", i+1, part, f[3])
		}
		out = append(out, OfferingRef{InstanceType: f[0], Zone: f[1], CapacityType: f[2], Price: price})
	}
	return out, nil
}

// ClaimOfferings returns the offerings the claim's annotation lists, in order.
func ClaimOfferings(claim *NodeClaim) ([]OfferingRef, error) {
	offerings, err := ParseOfferings(claim.Annotations[OfferingsAnnotationKey])
	if err != nil {
		return nil, fmt.Errorf("nodeclaim %s: annotation %s: %w", claim.Name, OfferingsAnnotationKey, err)
	}
	return offerings, nil
}
