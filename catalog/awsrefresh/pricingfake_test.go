package awsrefresh

import (
	"encoding/json"
	"fmt"
	"hash/fnv"
	"io"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"
)

// fakePricing serves the AWS Price List API's GetProducts (JSON 1.1 protocol) from documents shaped like the
// real ones, because moto does not emulate the Pricing service. It applies TERM_MATCH filters as the service
// does and pages its answers, so that the client's filters and pagination are exercised.
type fakePricing struct {
	t        *testing.T
	docs     []priceDoc
	pageSize int

	mu       sync.Mutex
	requests int
	filters  map[string]string // the filters of the last request
}

// priceDoc is one product of the fake price list.
type priceDoc struct {
	instanceType, regionCode, os, tenancy, preInstalledSw, capacityStatus string
	usd                                                                   string
}

func linuxDoc(instanceType, region, usd string) priceDoc {
	return priceDoc{instanceType, region, "Linux", "Shared", "NA", "Used", usd}
}

func newFakePricing(t *testing.T, docs []priceDoc) (*fakePricing, *httptest.Server) {
	f := &fakePricing{t: t, docs: docs, pageSize: 2}
	srv := httptest.NewServer(f)
	t.Cleanup(srv.Close)
	return f, srv
}

type getProductsRequest struct {
	ServiceCode   string
	FormatVersion string
	NextToken     string
	MaxResults    int
	Filters       []struct{ Field, Type, Value string }
}

func (f *fakePricing) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, typ, msg string) {
		w.Header().Set("Content-Type", "application/x-amz-json-1.1")
		w.WriteHeader(code)
		fmt.Fprintf(w, `{"__type":%q,"Message":%q}`, typ, msg)
	}
	if r.Method != http.MethodPost || r.Header.Get("X-Amz-Target") != "AWSPriceListService.GetProducts" {
		fail(400, "InvalidParameterException", "unsupported call "+r.Method+" "+r.Header.Get("X-Amz-Target"))
		return
	}
	if !strings.Contains(r.Header.Get("Authorization"), "/pricing/aws4_request") {
		fail(403, "AccessDeniedException", "request not signed for the pricing service")
		return
	}
	body, _ := io.ReadAll(r.Body)
	var req getProductsRequest
	if err := json.Unmarshal(body, &req); err != nil {
		fail(400, "InvalidParameterException", err.Error())
		return
	}
	if req.ServiceCode != "AmazonEC2" {
		fail(400, "InvalidParameterException", "unknown service code "+req.ServiceCode)
		return
	}
	filters := map[string]string{}
	for _, flt := range req.Filters {
		if flt.Type != "TERM_MATCH" {
			fail(400, "InvalidParameterException", "unsupported filter type "+flt.Type)
			return
		}
		filters[flt.Field] = flt.Value
	}
	f.mu.Lock()
	f.requests++
	f.filters = filters
	f.mu.Unlock()

	var matched []string
	for _, d := range f.docs {
		attrs := d.attributes()
		ok := true
		for k, v := range filters {
			if attrs[k] != v {
				ok = false
			}
		}
		if ok {
			matched = append(matched, d.json())
		}
	}
	start := 0
	if req.NextToken != "" {
		n, err := strconv.Atoi(req.NextToken)
		if err != nil || n < 0 || n > len(matched) {
			fail(400, "InvalidNextTokenException", "bad token")
			return
		}
		start = n
	}
	end := min(start+f.pageSize, len(matched))
	resp := map[string]any{"FormatVersion": "aws_v1", "PriceList": matched[start:end]}
	if end < len(matched) {
		resp["NextToken"] = strconv.Itoa(end)
	}
	w.Header().Set("Content-Type", "application/x-amz-json-1.1")
	_ = json.NewEncoder(w).Encode(resp)
}

func (d priceDoc) attributes() map[string]string {
	family, _, _ := strings.Cut(d.instanceType, ".")
	return map[string]string{
		"servicecode":              "AmazonEC2",
		"servicename":              "Amazon Elastic Compute Cloud",
		"location":                 map[string]string{"us-east-1": "US East (N. Virginia)", "eu-west-1": "EU (Ireland)"}[d.regionCode],
		"locationType":             "AWS Region",
		"regionCode":               d.regionCode,
		"instanceType":             d.instanceType,
		"instanceFamily":           "General purpose",
		"currentGeneration":        "Yes",
		"operatingSystem":          d.os,
		"tenancy":                  d.tenancy,
		"preInstalledSw":           d.preInstalledSw,
		"capacitystatus":           d.capacityStatus,
		"licenseModel":             "No License required",
		"marketoption":             "OnDemand",
		"operation":                "RunInstances",
		"usagetype":                "BoxUsage:" + d.instanceType,
		"physicalProcessor":        "Intel Xeon Platinum 8175",
		"networkPerformance":       "Up to 10 Gigabit",
		"processorArchitecture":    "64-bit",
		"normalizationSizeFactor":  "4",
		"instancesku":              "",
		"vpcnetworkingsupport":     "true",
		"classicnetworkingsupport": "false",
		"intelAvxAvailable":        "Yes",
		"storage":                  "EBS only",
		"family":                   family,
	}
}

// json renders the document as the service does: a JSON object serialised into a string.
func (d priceDoc) json() string {
	h := fnv.New64a()
	fmt.Fprint(h, d)
	sku := strings.ToUpper(strconv.FormatUint(h.Sum64(), 36))
	usd, _ := strconv.ParseFloat(d.usd, 64)
	doc := map[string]any{
		"product": map[string]any{
			"productFamily": "Compute Instance",
			"attributes":    d.attributes(),
			"sku":           sku,
		},
		"serviceCode": "AmazonEC2",
		"terms": map[string]any{
			"OnDemand": map[string]any{
				sku + ".JRTCKXETXF": map[string]any{
					"priceDimensions": map[string]any{
						sku + ".JRTCKXETXF.6YS6EN2CT7": map[string]any{
							"unit":         "Hrs",
							"endRange":     "Inf",
							"description":  fmt.Sprintf("$%g per On Demand %s %s Instance Hour", usd, d.os, d.instanceType),
							"appliesTo":    []string{},
							"rateCode":     sku + ".JRTCKXETXF.6YS6EN2CT7",
							"beginRange":   "0",
							"pricePerUnit": map[string]string{"USD": d.usd},
						},
					},
					"sku":            sku,
					"effectiveDate":  "2026-11-01T00:00:00Z",
					"offerTermCode":  "JRTCKXETXF",
					"termAttributes": map[string]string{},
				},
			},
		},
		"version":         "20261101000000",
		"publicationDate": "2026-11-01T00:00:00Z",
	}
	b, err := json.Marshal(doc)
	if err != nil {
		panic(err)
	}
	return string(b)
}
