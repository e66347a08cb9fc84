package awsrefresh

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"github.com/aws/aws-sdk-go-v2/service/ec2/types"

	"github.com/packwright/packwright/catalog"
)

// Spot product descriptions that mean Linux; the second is what EC2-Classic-era accounts (and moto) report.
var linuxSpotProducts = map[string]bool{"Linux/UNIX": true, "Linux/UNIX (Amazon VPC)": true}

func (r *Refresher) typeFilters() []types.Filter {
	if len(r.InstanceTypes) == 0 {
		return nil
	}
	return []types.Filter{{Name: aws.String("instance-type"), Values: r.InstanceTypes}}
}

func (r *Refresher) describeInstanceTypes(ctx context.Context) ([]types.InstanceTypeInfo, error) {
	p := ec2.NewDescribeInstanceTypesPaginator(r.EC2, &ec2.DescribeInstanceTypesInput{Filters: r.typeFilters()})
	var out []types.InstanceTypeInfo
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("awsrefresh %s: DescribeInstanceTypes: %w", r.Region, err)
		}
		out = append(out, page.InstanceTypes...)
	}
	return out, nil
}

// describeOfferings maps each instance type to the availability zones that sell it.
func (r *Refresher) describeOfferings(ctx context.Context) (map[string][]string, error) {
	p := ec2.NewDescribeInstanceTypeOfferingsPaginator(r.EC2, &ec2.DescribeInstanceTypeOfferingsInput{
		LocationType: types.LocationTypeAvailabilityZone,
		Filters:      r.typeFilters(),
	})
	zones := map[string][]string{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("awsrefresh %s: DescribeInstanceTypeOfferings: %w", r.Region, err)
		}
		for _, o := range page.InstanceTypeOfferings {
			if z := aws.ToString(o.Location); z != "" {
				zones[string(o.InstanceType)] = append(zones[string(o.InstanceType)], z)
			}
		}
	}
	return zones, nil
}

type typeZone struct{ instanceType, zone string }

type spotQuote struct {
	price float64
	at    time.Time
}

// spotPrices returns the Linux spot price in effect at `at` per (type, zone). With StartTime equal to EndTime
// EC2 answers one price per type, zone and product: the one in effect then. Should it return older entries too,
// the newest wins.
func (r *Refresher) spotPrices(ctx context.Context, at time.Time) (map[typeZone]float64, error) {
	in := &ec2.DescribeSpotPriceHistoryInput{
		StartTime:           aws.Time(at),
		EndTime:             aws.Time(at),
		ProductDescriptions: []string{"Linux/UNIX"},
		Filters:             r.typeFilters(),
	}
	p := ec2.NewDescribeSpotPriceHistoryPaginator(r.EC2, in)
	quotes := map[typeZone]spotQuote{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("awsrefresh %s: DescribeSpotPriceHistory: %w", r.Region, err)
		}
		for _, s := range page.SpotPriceHistory {
			if !linuxSpotProducts[string(s.ProductDescription)] {
				continue
			}
			price, err := strconv.ParseFloat(aws.ToString(s.SpotPrice), 64)
			if err != nil || price < 0 {
				r.logf("awsrefresh %s: ignoring spot price %q of %s in %s", r.Region, aws.ToString(s.SpotPrice), s.InstanceType, aws.ToString(s.AvailabilityZone))
				continue
			}
			k := typeZone{string(s.InstanceType), aws.ToString(s.AvailabilityZone)}
			ts := aws.ToTime(s.Timestamp)
			if q, ok := quotes[k]; !ok || ts.After(q.at) {
				quotes[k] = spotQuote{price, ts}
			}
		}
	}
	out := make(map[typeZone]float64, len(quotes))
	for k, q := range quotes {
		out[k] = q.price
	}
	return out, nil
}

// offerings combines zones, usage classes and prices into catalog offerings: on-demand in every zone when the
// type has an on-demand price, spot in each zone that has a spot price.
func offerings(name string, zones []string, classes []types.UsageClassType, onDemand map[string]float64, spot map[typeZone]float64) []catalog.Offering {
	od, hasOD := onDemand[name]
	// A type that lists no usage classes is taken to be sold both ways rather than dropped.
	sellsOD, sellsSpot := len(classes) == 0, len(classes) == 0
	for _, c := range classes {
		switch c {
		case types.UsageClassTypeOnDemand:
			sellsOD = true
		case types.UsageClassTypeSpot:
			sellsSpot = true
		}
	}
	zones = slices.Clone(zones)
	slices.Sort(zones)
	seen := map[string]bool{}
	var out []catalog.Offering
	for _, z := range zones {
		if seen[z] {
			continue
		}
		seen[z] = true
		if hasOD && sellsOD {
			out = append(out, catalog.Offering{Zone: z, CapacityType: catalog.OnDemand, Price: od})
		}
		if p, ok := spot[typeZone{name, z}]; ok && sellsSpot {
			out = append(out, catalog.Offering{Zone: z, CapacityType: catalog.Spot, Price: p})
		}
	}
	return out
}
