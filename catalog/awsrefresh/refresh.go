// Package awsrefresh builds a Packwright catalog from the AWS APIs: instance types and their limits from EC2
// DescribeInstanceTypes, zones from DescribeInstanceTypeOfferings, current spot prices from
// DescribeSpotPriceHistory and Linux on-demand prices from the Price List (Pricing) GetProducts API. Endpoints
// can be overridden, so that tests run against emulators on 127.0.0.1.
package awsrefresh

import (
	"context"
	"fmt"
	"path"
	"slices"
	"strings"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/pricing"

	"github.com/packwright/packwright/catalog"
)

// DefaultPricingRegion hosts the Price List API; it answers for every region.
const DefaultPricingRegion = "us-east-1"

// EC2API is the part of the EC2 client a refresh uses; *ec2.Client implements it.
type EC2API interface {
	ec2.DescribeInstanceTypesAPIClient
	ec2.DescribeInstanceTypeOfferingsAPIClient
	ec2.DescribeSpotPriceHistoryAPIClient
}

// PricingAPI is the part of the Pricing client a refresh uses; *pricing.Client implements it.
type PricingAPI interface {
	pricing.GetProductsAPIClient
}

// Options configures New.
type Options struct {
	// Region is the region to describe, e.g. "us-east-1". Required.
	Region string
	// EC2Endpoint and PricingEndpoint replace the default endpoints (the SDK's BaseEndpoint), e.g.
	// "http://127.0.0.1:5000" for an emulator.
	EC2Endpoint     string
	PricingEndpoint string
	// PricingRegion is where the Price List API is called; DefaultPricingRegion when empty.
	PricingRegion string
	// Credentials replaces the SDK's default credential chain (environment, shared config, IMDS...).
	Credentials aws.CredentialsProvider
	// InstanceTypes restricts the refresh to these names or patterns ("m5.*"); empty means every type.
	InstanceTypes []string
	// Now stamps the snapshot date and is the time spot prices are asked for; time.Now when nil.
	Now func() time.Time
	// Logf, when set, receives one line per instance type left out and why.
	Logf func(format string, args ...any)
}

// Refresher holds the clients of one refresh. Build it with New, or fill it by hand with other clients.
type Refresher struct {
	EC2           EC2API
	Pricing       PricingAPI
	Region        string
	InstanceTypes []string
	Now           func() time.Time
	Logf          func(format string, args ...any)
}

// New builds a Refresher with aws-sdk-go-v2 clients configured by opts.
func New(ctx context.Context, opts Options) (*Refresher, error) {
	if opts.Region == "" {
		return nil, fmt.Errorf("awsrefresh: region is required")
	}
	load := []func(*config.LoadOptions) error{config.WithRegion(opts.Region)}
	if opts.Credentials != nil {
		load = append(load, config.WithCredentialsProvider(opts.Credentials))
	}
	cfg, err := config.LoadDefaultConfig(ctx, load...)
	if err != nil {
		return nil, fmt.Errorf("awsrefresh %s: load AWS config: %w", opts.Region, err)
	}
	ec2Client := ec2.NewFromConfig(cfg, func(o *ec2.Options) {
		if opts.EC2Endpoint != "" {
			o.BaseEndpoint = aws.String(opts.EC2Endpoint)
		}
	})
	pricingRegion := opts.PricingRegion
	if pricingRegion == "" {
		pricingRegion = DefaultPricingRegion
	}
	pricingClient := pricing.NewFromConfig(cfg, func(o *pricing.Options) {
		o.Region = pricingRegion
		if opts.PricingEndpoint != "" {
			o.BaseEndpoint = aws.String(opts.PricingEndpoint)
		}
	})
	return &Refresher{
		EC2:           ec2Client,
		Pricing:       pricingClient,
		Region:        opts.Region,
		InstanceTypes: opts.InstanceTypes,
		Now:           opts.Now,
		Logf:          opts.Logf,
	}, nil
}

// Refresh builds a catalog with New(ctx, opts) and returns it.
func Refresh(ctx context.Context, opts Options) (*catalog.Catalog, error) {
	r, err := New(ctx, opts)
	if err != nil {
		return nil, err
	}
	return r.Refresh(ctx)
}

// RefreshFile refreshes and writes the catalog to path in the format of docs/catalog-format.md.
func RefreshFile(ctx context.Context, opts Options, path string) (*catalog.Catalog, error) {
	c, err := Refresh(ctx, opts)
	if err != nil {
		return nil, err
	}
	if err := c.WriteFile(path); err != nil {
		return nil, err
	}
	return c, nil
}

// Refresh asks EC2 and the Price List API and returns the catalog. An instance type is kept when its limits can
// be read (vCPU, memory, an architecture Packwright runs, network limits) and at least one (zone, capacity type)
// has a price; others are left out and reported through Logf.
func (r *Refresher) Refresh(ctx context.Context) (*catalog.Catalog, error) {
	if r.Region == "" {
		return nil, fmt.Errorf("awsrefresh: region is required")
	}
	now := time.Now
	if r.Now != nil {
		now = r.Now
	}
	at := now().UTC()
	infos, err := r.describeInstanceTypes(ctx)
	if err != nil {
		return nil, err
	}
	zones, err := r.describeOfferings(ctx)
	if err != nil {
		return nil, err
	}
	spot, err := r.spotPrices(ctx, at)
	if err != nil {
		return nil, err
	}
	onDemand, err := r.onDemandPrices(ctx)
	if err != nil {
		return nil, err
	}
	c := &catalog.Catalog{
		Region:       r.Region,
		SnapshotDate: at.Format(time.DateOnly),
		Source: "AWS EC2 DescribeInstanceTypes, DescribeInstanceTypeOfferings, DescribeSpotPriceHistory and " +
			"Price List GetProducts (Linux, shared tenancy, on-demand) at " + at.Format(time.RFC3339),
	}
	for _, info := range infos {
		name := string(info.InstanceType)
		if !r.wanted(name) {
			continue
		}
		it, why := convert(info)
		if why != "" {
			r.logf("awsrefresh %s: skipping %s: %s", r.Region, name, why)
			continue
		}
		it.Offerings = offerings(name, zones[name], info.SupportedUsageClasses, onDemand, spot)
		if len(it.Offerings) == 0 {
			r.logf("awsrefresh %s: skipping %s: no priced offering in any zone", r.Region, name)
			continue
		}
		c.InstanceTypes = append(c.InstanceTypes, it)
	}
	slices.SortFunc(c.InstanceTypes, func(a, b catalog.InstanceType) int { return strings.Compare(a.Name, b.Name) })
	if len(c.InstanceTypes) == 0 {
		return nil, fmt.Errorf("awsrefresh %s: no instance type has both limits and a price", r.Region)
	}
	if err := c.Validate(); err != nil {
		return nil, fmt.Errorf("awsrefresh %s: %w", r.Region, err)
	}
	return c, nil
}

// wanted applies the InstanceTypes patterns on the client too: the server-side filters already narrow the
// answers on AWS, but an emulator may ignore them.
func (r *Refresher) wanted(name string) bool {
	if len(r.InstanceTypes) == 0 {
		return true
	}
	for _, p := range r.InstanceTypes {
		if ok, _ := path.Match(p, name); ok {
			return true
		}
	}
	return false
}

func (r *Refresher) logf(format string, args ...any) {
	if r.Logf != nil {
		r.Logf(format, args...)
	}
}
