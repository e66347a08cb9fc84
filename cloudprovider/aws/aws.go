// Package aws is the CloudProvider for Amazon EC2, on aws-sdk-go-v2. Create launches one instance for a
// NodeClaim over its ordered offerings (the packwright.dev/offerings annotation), either with one CreateFleet
// request of type instant or with RunInstances tried offering by offering; instances and their volumes carry the
// cluster, NodeClaim and NodePool tags, which is how Create stays idempotent (a retry finds the instance it
// already launched) and how List finds the cluster's instances for garbage collection.
package aws

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	"github.com/aws/smithy-go"
	corev1 "k8s.io/api/core/v1"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
)

// Name is the provider's name, as returned by Provider.Name.
const Name = "aws"

// Capacity types, as in the packwright.dev/capacity-type label.
const (
	capacitySpot     = "spot"
	capacityOnDemand = "on-demand"
)

// Launch methods.
const (
	// LaunchFleet launches with one CreateFleet request of type instant, the offerings as prioritised overrides.
	LaunchFleet = "fleet"
	// LaunchRunInstances tries RunInstances offering by offering, in order.
	LaunchRunInstances = "run-instances"
)

// EC2API is the part of the EC2 client the provider calls; *ec2.Client implements it.
type EC2API interface {
	CreateFleet(ctx context.Context, in *ec2.CreateFleetInput, opts ...func(*ec2.Options)) (*ec2.CreateFleetOutput, error)
	RunInstances(ctx context.Context, in *ec2.RunInstancesInput, opts ...func(*ec2.Options)) (*ec2.RunInstancesOutput, error)
	DescribeInstances(ctx context.Context, in *ec2.DescribeInstancesInput, opts ...func(*ec2.Options)) (*ec2.DescribeInstancesOutput, error)
	TerminateInstances(ctx context.Context, in *ec2.TerminateInstancesInput, opts ...func(*ec2.Options)) (*ec2.TerminateInstancesOutput, error)
}

// Describe gives the labels, capacity and allocatable that an instance of an offering registers with (EC2 does
// not report allocatable; the controller fills this from the catalog).
type Describe func(instanceType, zone, capacityType string) (labels map[string]string, capacity, allocatable corev1.ResourceList, ok bool)

// Options configure a Provider.
type Options struct {
	// ClusterName tags every instance (required).
	ClusterName string
	// LaunchTemplate names the EC2 launch template with the image, security groups, instance profile and user
	// data of the cluster's nodes (required).
	LaunchTemplate string
	// Subnets maps a zone to the subnet to launch in; a zone without one launches in the zone's default subnet.
	Subnets map[string]string
	// LaunchMethod is LaunchFleet (default) or LaunchRunInstances.
	LaunchMethod string
	// Describe sizes and labels launched instances; without it the claim's status carries no capacity.
	Describe Describe
}

// Provider launches, finds and terminates EC2 instances for NodeClaims.
type Provider struct {
	ec2  EC2API
	opts Options
}

var _ cloudprovider.CloudProvider = (*Provider)(nil)

// New returns a Provider calling EC2 through client.
func New(client EC2API, opts Options) (*Provider, error) {
	if opts.ClusterName == "" {
		return nil, errors.New("aws provider: cluster name is required")
	}
	if opts.LaunchTemplate == "" {
		return nil, errors.New("aws provider: a launch template name is required (--aws-launch-template)")
	}
	switch opts.LaunchMethod {
	case "":
		opts.LaunchMethod = LaunchFleet
	case LaunchFleet, LaunchRunInstances:
	default:
		return nil, fmt.Errorf("aws provider: unknown launch method %q (want %s or %s)", opts.LaunchMethod, LaunchFleet, LaunchRunInstances)
	}
	return &Provider{ec2: client, opts: opts}, nil
}

// Name returns "aws".
func (p *Provider) Name() string { return Name }

// liveStates are the instance states that still count as the claim's instance.
var liveStates = []string{"pending", "running", "stopping", "stopped"}

// Create launches the claim's instance, or returns the one already launched for it.
func (p *Provider) Create(ctx context.Context, claim *v1.NodeClaim) (*v1.NodeClaim, error) {
	existing, err := p.describe(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + v1.ClusterTagKey), Values: []string{p.opts.ClusterName}},
		{Name: aws.String("tag:" + v1.NodeClaimTagKey), Values: []string{claim.Name}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	}})
	if err != nil {
		return nil, fmt.Errorf("nodeclaim %s: look for an instance already launched: %w", claim.Name, err)
	}
	if len(existing) > 0 {
		return p.claimFor(existing[0]), nil
	}
	offerings, err := v1.ClaimOfferings(claim)
	if err != nil {
		return nil, fmt.Errorf("nodeclaim %s: %w", claim.Name, err)
	}
	if len(offerings) == 0 {
		return nil, fmt.Errorf("nodeclaim %s lists no offerings (annotation %s)", claim.Name, v1.OfferingsAnnotationKey)
	}
	var inst *ec2types.Instance
	if p.opts.LaunchMethod == LaunchRunInstances {
		inst, err = p.runInstances(ctx, claim, offerings)
	} else {
		inst, err = p.createFleet(ctx, claim, offerings)
	}
	if err != nil {
		return nil, fmt.Errorf("launch nodeclaim %s: %w", claim.Name, err)
	}
	return p.claimFor(*inst), nil
}

// runInstances tries each offering in order; capacity errors move on to the next, others stop.
func (p *Provider) runInstances(ctx context.Context, claim *v1.NodeClaim, offerings []v1.OfferingRef) (*ec2types.Instance, error) {
	var capacity []error
	for _, o := range offerings {
		in := &ec2.RunInstancesInput{
			MinCount: aws.Int32(1), MaxCount: aws.Int32(1),
			InstanceType:      ec2types.InstanceType(o.InstanceType),
			LaunchTemplate:    &ec2types.LaunchTemplateSpecification{LaunchTemplateName: aws.String(p.opts.LaunchTemplate), Version: aws.String("$Default")},
			TagSpecifications: p.tags(claim, ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume),
			// The claim's name makes a retried request (after a timeout, say) launch nothing twice.
			ClientToken: clientToken(claim, o),
		}
		if subnet := p.opts.Subnets[o.Zone]; subnet != "" {
			in.SubnetId = aws.String(subnet)
		} else {
			in.Placement = &ec2types.Placement{AvailabilityZone: aws.String(o.Zone)}
		}
		if o.CapacityType == capacitySpot {
			in.InstanceMarketOptions = &ec2types.InstanceMarketOptionsRequest{MarketType: ec2types.MarketTypeSpot,
				SpotOptions: &ec2types.SpotMarketOptions{SpotInstanceType: ec2types.SpotInstanceTypeOneTime,
					InstanceInterruptionBehavior: ec2types.InstanceInterruptionBehaviorTerminate}}
		}
		out, err := p.ec2.RunInstances(ctx, in)
		if err != nil {
			if code := errorCode(err); isCapacityCode(code) {
				capacity = append(capacity, cloudprovider.NewInsufficientCapacityError(o.InstanceType, o.CapacityType, o.Zone, err))
				continue
			}
			return nil, fmt.Errorf("RunInstances %s: %w", o, err)
		}
		if len(out.Instances) == 0 {
			return nil, fmt.Errorf("RunInstances %s returned no instance", o)
		}
		return &out.Instances[0], nil
	}
	return nil, errors.Join(capacity...)
}

// createFleet launches with CreateFleet (instant), one request per capacity type in the order the offerings
// first name them, the offerings of that type as overrides by priority.
func (p *Provider) createFleet(ctx context.Context, claim *v1.NodeClaim, offerings []v1.OfferingRef) (*ec2types.Instance, error) {
	var capacityTypes []string
	for _, o := range offerings {
		if !slices.Contains(capacityTypes, o.CapacityType) {
			capacityTypes = append(capacityTypes, o.CapacityType)
		}
	}
	var capacity []error
	for _, ct := range capacityTypes {
		var overrides []ec2types.FleetLaunchTemplateOverridesRequest
		for i, o := range offerings {
			if o.CapacityType != ct {
				continue
			}
			ov := ec2types.FleetLaunchTemplateOverridesRequest{InstanceType: ec2types.InstanceType(o.InstanceType), Priority: aws.Float64(float64(i))}
			if subnet := p.opts.Subnets[o.Zone]; subnet != "" {
				ov.SubnetId = aws.String(subnet)
			} else {
				ov.AvailabilityZone = aws.String(o.Zone)
			}
			overrides = append(overrides, ov)
		}
		in := &ec2.CreateFleetInput{
			Type: ec2types.FleetTypeInstant,
			LaunchTemplateConfigs: []ec2types.FleetLaunchTemplateConfigRequest{{
				LaunchTemplateSpecification: &ec2types.FleetLaunchTemplateSpecificationRequest{LaunchTemplateName: aws.String(p.opts.LaunchTemplate), Version: aws.String("$Default")},
				Overrides:                   overrides,
			}},
			TargetCapacitySpecification: &ec2types.TargetCapacitySpecificationRequest{TotalTargetCapacity: aws.Int32(1)},
			TagSpecifications:           p.tags(claim, ec2types.ResourceTypeInstance, ec2types.ResourceTypeVolume, ec2types.ResourceTypeFleet),
		}
		if ct == capacitySpot {
			in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeSpot
			in.SpotOptions = &ec2types.SpotOptionsRequest{AllocationStrategy: ec2types.SpotAllocationStrategyCapacityOptimizedPrioritized}
		} else {
			in.TargetCapacitySpecification.DefaultTargetCapacityType = ec2types.DefaultTargetCapacityTypeOnDemand
			in.OnDemandOptions = &ec2types.OnDemandOptionsRequest{AllocationStrategy: ec2types.FleetOnDemandAllocationStrategyPrioritized}
		}
		out, err := p.ec2.CreateFleet(ctx, in)
		if err != nil {
			if isCapacityCode(errorCode(err)) {
				capacity = append(capacity, cloudprovider.NewInsufficientCapacityError("", ct, "", err))
				continue
			}
			return nil, fmt.Errorf("CreateFleet (%s): %w", ct, err)
		}
		for _, fi := range out.Instances {
			if len(fi.InstanceIds) == 0 {
				continue
			}
			insts, err := p.describe(ctx, &ec2.DescribeInstancesInput{InstanceIds: fi.InstanceIds[:1]})
			if err != nil {
				return nil, fmt.Errorf("describe launched instance %s: %w", fi.InstanceIds[0], err)
			}
			if len(insts) > 0 {
				return &insts[0], nil
			}
		}
		var other []error
		for _, e := range out.Errors {
			code, msg := aws.ToString(e.ErrorCode), aws.ToString(e.ErrorMessage)
			err := fmt.Errorf("%s: %s", code, msg)
			if !isCapacityCode(code) {
				other = append(other, err)
				continue
			}
			it, zone := "", ""
			if lt := e.LaunchTemplateAndOverrides; lt != nil && lt.Overrides != nil {
				it, zone = string(lt.Overrides.InstanceType), aws.ToString(lt.Overrides.AvailabilityZone)
			}
			capacity = append(capacity, cloudprovider.NewInsufficientCapacityError(it, ct, zone, err))
		}
		if len(other) > 0 {
			return nil, fmt.Errorf("CreateFleet (%s) launched nothing: %w", ct, errors.Join(other...))
		}
		if len(out.Errors) == 0 {
			capacity = append(capacity, cloudprovider.NewInsufficientCapacityError("", ct, "", errors.New("CreateFleet launched no instance and gave no reason")))
		}
	}
	return nil, errors.Join(capacity...)
}

// Delete terminates the claim's instance.
func (p *Provider) Delete(ctx context.Context, claim *v1.NodeClaim) error {
	id, err := instanceID(claim.Status.ProviderID)
	if err != nil {
		return cloudprovider.NewNodeClaimNotFoundError(claim.Status.ProviderID, err)
	}
	if _, err := p.get(ctx, claim.Status.ProviderID, id); err != nil {
		return err
	}
	if _, err := p.ec2.TerminateInstances(ctx, &ec2.TerminateInstancesInput{InstanceIds: []string{id}}); err != nil {
		if errorCode(err) == "InvalidInstanceID.NotFound" {
			return cloudprovider.NewNodeClaimNotFoundError(claim.Status.ProviderID, err)
		}
		return fmt.Errorf("terminate instance %s of nodeclaim %s: %w", id, claim.Name, err)
	}
	return nil
}

// Get returns the claim of the instance with providerID.
func (p *Provider) Get(ctx context.Context, providerID string) (*v1.NodeClaim, error) {
	id, err := instanceID(providerID)
	if err != nil {
		return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, err)
	}
	inst, err := p.get(ctx, providerID, id)
	if err != nil {
		return nil, err
	}
	return p.claimFor(*inst), nil
}

func (p *Provider) get(ctx context.Context, providerID, id string) (*ec2types.Instance, error) {
	insts, err := p.describe(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
	if err != nil {
		if errorCode(err) == "InvalidInstanceID.NotFound" || errorCode(err) == "InvalidInstanceID.Malformed" {
			return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, err)
		}
		return nil, fmt.Errorf("describe instance %s: %w", id, err)
	}
	for i := range insts {
		if slices.Contains(liveStates, string(insts[i].State.Name)) {
			return &insts[i], nil
		}
	}
	return nil, cloudprovider.NewNodeClaimNotFoundError(providerID, nil)
}

// List returns a claim for every live instance tagged for the cluster.
func (p *Provider) List(ctx context.Context) ([]*v1.NodeClaim, error) {
	insts, err := p.describe(ctx, &ec2.DescribeInstancesInput{Filters: []ec2types.Filter{
		{Name: aws.String("tag:" + v1.ClusterTagKey), Values: []string{p.opts.ClusterName}},
		{Name: aws.String("instance-state-name"), Values: liveStates},
	}})
	if err != nil {
		return nil, fmt.Errorf("list instances of cluster %s: %w", p.opts.ClusterName, err)
	}
	out := make([]*v1.NodeClaim, 0, len(insts))
	for _, inst := range insts {
		out = append(out, p.claimFor(inst))
	}
	return out, nil
}

// describe pages through DescribeInstances.
func (p *Provider) describe(ctx context.Context, in *ec2.DescribeInstancesInput) ([]ec2types.Instance, error) {
	var out []ec2types.Instance
	for {
		page, err := p.ec2.DescribeInstances(ctx, in)
		if err != nil {
			return nil, err
		}
		for _, r := range page.Reservations {
			out = append(out, r.Instances...)
		}
		if aws.ToString(page.NextToken) == "" {
			return out, nil
		}
		next := *in
		next.NextToken = page.NextToken
		in = &next
	}
}

// tags are the tags of everything a launch creates.
func (p *Provider) tags(claim *v1.NodeClaim, kinds ...ec2types.ResourceType) []ec2types.TagSpecification {
	tags := []ec2types.Tag{
		{Key: aws.String("Name"), Value: aws.String(claim.Name)},
		{Key: aws.String(v1.ClusterTagKey), Value: aws.String(p.opts.ClusterName)},
		{Key: aws.String(v1.NodeClaimTagKey), Value: aws.String(claim.Name)},
	}
	if pool := claim.Labels[v1.NodePoolLabelKey]; pool != "" {
		tags = append(tags, ec2types.Tag{Key: aws.String(v1.NodePoolTagKey), Value: aws.String(pool)})
	}
	out := make([]ec2types.TagSpecification, 0, len(kinds))
	for _, k := range kinds {
		out = append(out, ec2types.TagSpecification{ResourceType: k, Tags: tags})
	}
	return out
}

// claimFor describes an instance as a NodeClaim: name from its tag, providerID, resolved labels and, when
// Describe knows the offering, capacity and allocatable.
func (p *Provider) claimFor(inst ec2types.Instance) *v1.NodeClaim {
	zone := ""
	if inst.Placement != nil {
		zone = aws.ToString(inst.Placement.AvailabilityZone)
	}
	capacityType := capacityOnDemand
	if inst.InstanceLifecycle == ec2types.InstanceLifecycleTypeSpot {
		capacityType = capacitySpot
	}
	c := &v1.NodeClaim{}
	c.Labels = map[string]string{
		corev1.LabelInstanceTypeStable: string(inst.InstanceType),
		corev1.LabelTopologyZone:       zone,
		v1.CapacityTypeLabelKey:        capacityType,
	}
	for _, t := range inst.Tags {
		switch aws.ToString(t.Key) {
		case v1.NodeClaimTagKey:
			c.Name = aws.ToString(t.Value)
		case v1.NodePoolTagKey:
			c.Labels[v1.NodePoolLabelKey] = aws.ToString(t.Value)
		}
	}
	c.Status.ProviderID = fmt.Sprintf("aws:///%s/%s", zone, aws.ToString(inst.InstanceId))
	c.Status.ImageID = aws.ToString(inst.ImageId)
	if p.opts.Describe != nil {
		if labels, capacity, alloc, ok := p.opts.Describe(string(inst.InstanceType), zone, capacityType); ok {
			for k, v := range labels {
				if _, set := c.Labels[k]; !set {
					c.Labels[k] = v
				}
			}
			c.Status.Capacity, c.Status.Allocatable = capacity, alloc
		}
	}
	return c
}

// instanceID parses aws:///<zone>/<instance-id>.
func instanceID(providerID string) (string, error) {
	rest, ok := strings.CutPrefix(providerID, "aws:///")
	i := strings.LastIndex(rest, "/")
	if !ok || i < 0 || !strings.HasPrefix(rest[i+1:], "i-") {
		return "", fmt.Errorf("providerID %q is not aws:///<zone>/<instance-id>", providerID)
	}
	return rest[i+1:], nil
}

// clientToken identifies one launch attempt of one claim (EC2 allows 64 characters).
func clientToken(claim *v1.NodeClaim, o v1.OfferingRef) *string {
	sum := sha256.Sum256([]byte(string(claim.UID) + "/" + claim.Name + "/" + o.String()))
	return aws.String(hex.EncodeToString(sum[:16]))
}

// errorCode is the EC2 error code of err, or "".
func errorCode(err error) string {
	var api smithy.APIError
	if errors.As(err, &api) {
		return api.ErrorCode()
	}
	return ""
}

// isCapacityCode reports whether an EC2 error code means "no capacity for this offering now": the launch can
// succeed with another offering, or later.
func isCapacityCode(code string) bool {
	switch code {
	case "InsufficientInstanceCapacity", "InsufficientCapacity", "InsufficientHostCapacity", "InsufficientReservedInstanceCapacity",
		"Unsupported", "SpotMaxPriceTooLow", "MaxSpotInstanceCountExceeded", "UnfulfillableCapacity", "InsufficientFreeAddressesInSubnet":
		return true
	}
	return false
}
