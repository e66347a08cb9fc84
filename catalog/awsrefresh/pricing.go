package awsrefresh

import (
	"context"
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/pricing"
	ptypes "github.com/aws/aws-sdk-go-v2/service/pricing/types"
)

// onDemandFilters select the price a Linux node without extras pays: shared tenancy, no pre-installed
// software, no license, a running instance ("Used" rather than a capacity reservation).
var onDemandFilters = map[string]string{
	"operatingSystem": "Linux",
	"tenancy":         "Shared",
	"preInstalledSw":  "NA",
	"capacitystatus":  "Used",
	"licenseModel":    "No License required",
	"marketoption":    "OnDemand",
}

// onDemandPrices returns the Linux on-demand USD/hour per instance type from the Price List API.
func (r *Refresher) onDemandPrices(ctx context.Context) (map[string]float64, error) {
	filters := []ptypes.Filter{{Field: aws.String("regionCode"), Type: ptypes.FilterTypeTermMatch, Value: aws.String(r.Region)}}
	for _, k := range []string{"operatingSystem", "tenancy", "preInstalledSw", "capacitystatus", "licenseModel", "marketoption"} {
		filters = append(filters, ptypes.Filter{Field: aws.String(k), Type: ptypes.FilterTypeTermMatch, Value: aws.String(onDemandFilters[k])})
	}
	p := pricing.NewGetProductsPaginator(r.Pricing, &pricing.GetProductsInput{
		ServiceCode:   aws.String("AmazonEC2"),
		FormatVersion: aws.String("aws_v1"),
		Filters:       filters,
	})
	prices := map[string]float64{}
	for p.HasMorePages() {
		page, err := p.NextPage(ctx)
		if err != nil {
			return nil, fmt.Errorf("awsrefresh %s: pricing GetProducts: %w", r.Region, err)
		}
		for _, doc := range page.PriceList {
			name, price, err := parseProduct(doc, r.Region)
			if err != nil {
				return nil, fmt.Errorf("awsrefresh %s: pricing GetProducts: %w", r.Region, err)
			}
			if name == "" {
				continue
			}
			// Several SKUs can survive the filters (e.g. a second usage type); the cheapest is what a plain
			// launch pays.
			if old, ok := prices[name]; !ok || price < old {
				prices[name] = price
			}
		}
	}
	return prices, nil
}

// product is the part of a Price List document (format aws_v1) that a refresh reads.
type product struct {
	Product struct {
		Attributes map[string]string `json:"attributes"`
	} `json:"product"`
	Terms struct {
		OnDemand map[string]struct {
			PriceDimensions map[string]struct {
				Unit         string            `json:"unit"`
				PricePerUnit map[string]string `json:"pricePerUnit"`
			} `json:"priceDimensions"`
		} `json:"OnDemand"`
	} `json:"terms"`
}

// parseProduct returns the instance type and hourly USD price of one Price List document, or an empty name when
// the document is not a plain Linux on-demand instance price of region (the filters are checked again here,
// as a server may not apply them all) or carries no positive hourly price.
func parseProduct(doc, region string) (string, float64, error) {
	var p product
	if err := json.Unmarshal([]byte(doc), &p); err != nil {
		return "", 0, fmt.Errorf("price list document: %w", err)
	}
	a := p.Product.Attributes
	name := a["instanceType"]
	if name == "" {
		return "", 0, nil
	}
	if rc, ok := a["regionCode"]; ok && rc != region {
		return "", 0, nil
	}
	for k, want := range onDemandFilters {
		if k == "marketoption" {
			continue // an attribute only some documents carry; the OnDemand term below is what counts
		}
		if v, ok := a[k]; ok && v != want {
			return "", 0, nil
		}
	}
	best := 0.0
	for _, term := range p.Terms.OnDemand {
		for _, dim := range term.PriceDimensions {
			if dim.Unit != "Hrs" {
				continue
			}
			usd, err := strconv.ParseFloat(dim.PricePerUnit["USD"], 64)
			if err != nil || usd <= 0 {
				continue
			}
			if best == 0 || usd < best {
				best = usd
			}
		}
	}
	if best == 0 {
		return "", 0, nil
	}
	return name, best, nil
}
