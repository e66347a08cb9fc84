package aws

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"net/http/httputil"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/aws/retry"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	ec2types "github.com/aws/aws-sdk-go-v2/service/ec2/types"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/types"

	v1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/internal/moto"
)

func TestMain(m *testing.M) {
	code := m.Run()
	moto.Stop()
	os.Exit(code)
}

// fault makes the proxy answer chosen EC2 requests with EC2's own error responses instead of moto's.
type fault struct {
	mu sync.Mutex
	// ice lists instance types whose launches fail with InsufficientInstanceCapacity.
	ice map[string]bool
	// throttle answers this many RunInstances requests with RequestLimitExceeded (-1: all of them).
	throttle int
	calls    map[string]int // EC2 action → requests seen
}

// proxy puts a reverse proxy in front of moto that injects f's faults, as EC2 would send them.
func proxy(t *testing.T, f *fault) string {
	t.Helper()
	target, err := url.Parse(moto.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(target)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		body, _ := io.ReadAll(r.Body)
		r.Body = io.NopCloser(bytes.NewReader(body))
		form, _ := url.ParseQuery(string(body))
		action := form.Get("Action")
		f.mu.Lock()
		f.calls[action]++
		throttled := action == "RunInstances" && f.throttle != 0
		if throttled && f.throttle > 0 {
			f.throttle--
		}
		ice := (action == "RunInstances" && f.ice[form.Get("InstanceType")]) ||
			(action == "CreateFleet" && f.ice[form.Get("LaunchTemplateConfigs.1.Overrides.1.InstanceType")])
		f.mu.Unlock()
		switch {
		case throttled:
			ec2Error(w, http.StatusServiceUnavailable, "RequestLimitExceeded", "Request limit exceeded.")
		case ice:
			ec2Error(w, http.StatusInternalServerError, "InsufficientInstanceCapacity",
				"We currently do not have sufficient capacity in the Availability Zone you requested.")
		default:
			rp.ServeHTTP(w, r)
		}
	}))
	t.Cleanup(srv.Close)
	return srv.URL
}

// ec2Error writes an error in the EC2 query protocol's format.
func ec2Error(w http.ResponseWriter, status int, code, message string) {
	w.Header().Set("Content-Type", "text/xml;charset=UTF-8")
	w.WriteHeader(status)
	fmt.Fprintf(w, `<?xml version="1.0" encoding="UTF-8"?>
<Response><Errors><Error><Code>%s</Code><Message>%s</Message></Error></Errors><RequestID>packwright-test</RequestID></Response>`, code, message)
}

// newProvider returns a provider whose EC2 client talks to endpoint, with a launch template created there, a
// quick retryer (the SDK's standard one, with short backoff) and a fixed Describe.
func newProvider(t *testing.T, endpoint, method string) (*Provider, *ec2.Client) {
	t.Helper()
	client := ec2.New(ec2.Options{
		Region:       "us-east-1",
		BaseEndpoint: aws.String(endpoint),
		Credentials:  credentials.NewStaticCredentialsProvider("test", "test", ""),
		Retryer: retry.NewStandard(func(o *retry.StandardOptions) {
			o.MaxAttempts = 3
			o.Backoff = retry.NewExponentialJitterBackoff(20 * time.Millisecond)
		}),
	})
	name := fmt.Sprintf("packwright-%s-%d", strings.ReplaceAll(t.Name(), "/", "-"), time.Now().UnixNano())
	if len(name) > 120 {
		name = name[len(name)-120:]
	}
	_, err := client.CreateLaunchTemplate(context.Background(), &ec2.CreateLaunchTemplateInput{
		LaunchTemplateName: aws.String(name),
		LaunchTemplateData: &ec2types.RequestLaunchTemplateData{ImageId: aws.String("ami-12c6146b")},
	})
	if err != nil {
		t.Fatalf("create launch template: %v", err)
	}
	// moto's default VPC has a default subnet in every zone; name them as a cluster's node subnets would be.
	subnets := map[string]string{}
	out, err := client.DescribeSubnets(context.Background(), &ec2.DescribeSubnetsInput{})
	if err != nil {
		t.Fatalf("describe subnets: %v", err)
	}
	for _, s := range out.Subnets {
		subnets[aws.ToString(s.AvailabilityZone)] = aws.ToString(s.SubnetId)
	}
	p, err := New(client, Options{ClusterName: "test-" + name, LaunchTemplate: name, LaunchMethod: method, Subnets: subnets,
		Describe: func(it, zone, ct string) (map[string]string, corev1.ResourceList, corev1.ResourceList, bool) {
			rl := corev1.ResourceList{corev1.ResourceCPU: resource.MustParse("2"), corev1.ResourceMemory: resource.MustParse("8Gi")}
			return map[string]string{corev1.LabelArchStable: "amd64"}, rl, rl, true
		}})
	if err != nil {
		t.Fatal(err)
	}
	return p, client
}

func claim(name string, offerings ...v1.OfferingRef) *v1.NodeClaim {
	c := &v1.NodeClaim{ObjectMeta: metav1.ObjectMeta{Name: name, UID: types.UID(name + "-uid"),
		Labels:      map[string]string{v1.NodePoolLabelKey: "default"},
		Annotations: map[string]string{v1.OfferingsAnnotationKey: v1.FormatOfferings(offerings)}}}
	return c
}

func offering(it, zone, ct string) v1.OfferingRef {
	return v1.OfferingRef{InstanceType: it, Zone: zone, CapacityType: ct, Price: 0.1}
}

// TestLifecycle launches, finds, lists and terminates instances through both launch methods, against moto.
func TestLifecycle(t *testing.T) {
	for _, method := range []string{LaunchFleet, LaunchRunInstances} {
		t.Run(method, func(t *testing.T) {
			ctx := context.Background()
			p, client := newProvider(t, moto.URL(t), method)
			for _, tc := range []struct {
				name, capacityType string
			}{{"od", capacityOnDemand}, {"spot", capacitySpot}} {
				c := claim("claim-"+method+"-"+tc.name, offering("m5.large", "us-east-1b", tc.capacityType))
				got, err := p.Create(ctx, c)
				if err != nil {
					t.Fatalf("create %s: %v", tc.name, err)
				}
				if !strings.HasPrefix(got.Status.ProviderID, "aws:///us-east-1b/i-") {
					t.Errorf("providerID %q", got.Status.ProviderID)
				}
				if got.Name != c.Name || got.Labels[corev1.LabelInstanceTypeStable] != "m5.large" ||
					got.Labels[corev1.LabelTopologyZone] != "us-east-1b" || got.Labels[v1.NodePoolLabelKey] != "default" ||
					got.Labels[corev1.LabelArchStable] != "amd64" || got.Status.Allocatable.Cpu().Value() != 2 {
					t.Errorf("claim from the instance: name %q labels %v allocatable %v", got.Name, got.Labels, got.Status.Allocatable)
				}
				if got.Labels[v1.CapacityTypeLabelKey] != tc.capacityType {
					t.Errorf("capacity type %q, want %q", got.Labels[v1.CapacityTypeLabelKey], tc.capacityType)
				}
				// The instance carries the tags garbage collection and idempotency rely on.
				id, _ := instanceID(got.Status.ProviderID)
				out, err := client.DescribeInstances(ctx, &ec2.DescribeInstancesInput{InstanceIds: []string{id}})
				if err != nil {
					t.Fatal(err)
				}
				tags := map[string]string{}
				for _, tg := range out.Reservations[0].Instances[0].Tags {
					tags[aws.ToString(tg.Key)] = aws.ToString(tg.Value)
				}
				if tags[v1.ClusterTagKey] != p.opts.ClusterName || tags[v1.NodeClaimTagKey] != c.Name || tags[v1.NodePoolTagKey] != "default" || tags["Name"] != c.Name {
					t.Errorf("tags %v", tags)
				}
				// A retry of the same claim finds the instance instead of launching another.
				again, err := p.Create(ctx, c)
				if err != nil || again.Status.ProviderID != got.Status.ProviderID {
					t.Errorf("second create: %v, providerID %q, want %q", err, again.Status.ProviderID, got.Status.ProviderID)
				}
				if g, err := p.Get(ctx, got.Status.ProviderID); err != nil || g.Name != c.Name {
					t.Errorf("get: %v %v", g, err)
				}
			}
			list, err := p.List(ctx)
			if err != nil || len(list) != 2 {
				t.Fatalf("list: %d claims, %v; want 2", len(list), err)
			}
			for _, c := range list {
				if err := p.Delete(ctx, c); err != nil {
					t.Errorf("delete %s: %v", c.Name, err)
				}
				if err := p.Delete(ctx, c); !cloudprovider.IsNodeClaimNotFound(err) {
					t.Errorf("delete %s again: %v, want not found", c.Name, err)
				}
				if _, err := p.Get(ctx, c.Status.ProviderID); !cloudprovider.IsNodeClaimNotFound(err) {
					t.Errorf("get %s after delete: %v, want not found", c.Name, err)
				}
			}
			if list, err := p.List(ctx); err != nil || len(list) != 0 {
				t.Errorf("list after delete: %d, %v", len(list), err)
			}
			if _, err := p.Get(ctx, "aws:///us-east-1b/i-0123456789abcdef0"); !cloudprovider.IsNodeClaimNotFound(err) {
				t.Errorf("get unknown instance: %v, want not found", err)
			}
			if _, err := p.Get(ctx, "sim://x"); !cloudprovider.IsNodeClaimNotFound(err) {
				t.Errorf("get foreign providerID: %v, want not found", err)
			}
		})
	}
}

// TestInsufficientCapacity: an offering without capacity maps to InsufficientCapacityError naming it;
// RunInstances falls back to the next offering; when none has capacity the error covers them all.
func TestInsufficientCapacity(t *testing.T) {
	ctx := context.Background()
	f := &fault{ice: map[string]bool{"c5.large": true}, calls: map[string]int{}}
	endpoint := proxy(t, f)

	p, _ := newProvider(t, endpoint, LaunchRunInstances)
	got, err := p.Create(ctx, claim("ice-fallback", offering("c5.large", "us-east-1a", capacitySpot), offering("m5.large", "us-east-1a", capacityOnDemand)))
	if err != nil {
		t.Fatalf("create with a fallback: %v", err)
	}
	if it := got.Labels[corev1.LabelInstanceTypeStable]; it != "m5.large" {
		t.Errorf("launched %s, want the fallback m5.large", it)
	}
	_, err = p.Create(ctx, claim("ice-only", offering("c5.large", "us-east-1a", capacitySpot)))
	var ice *cloudprovider.InsufficientCapacityError
	if !cloudprovider.IsInsufficientCapacity(err) || !errorsAs(err, &ice) || ice.InstanceType != "c5.large" || ice.CapacityType != capacitySpot || ice.Zone != "us-east-1a" {
		t.Errorf("create without capacity: %v, want an InsufficientCapacityError for c5.large/spot/us-east-1a", err)
	}

	fleet, _ := newProvider(t, endpoint, LaunchFleet)
	_, err = fleet.Create(ctx, claim("ice-fleet", offering("c5.large", "us-east-1a", capacitySpot)))
	if !cloudprovider.IsInsufficientCapacity(err) {
		t.Errorf("CreateFleet without capacity: %v, want an InsufficientCapacityError", err)
	}
}

// TestThrottling: RequestLimitExceeded is retried by the SDK's retryer and the launch succeeds; a throttle that
// lasts gives an error that says so.
func TestThrottling(t *testing.T) {
	ctx := context.Background()
	f := &fault{throttle: 2, calls: map[string]int{}}
	p, _ := newProvider(t, proxy(t, f), LaunchRunInstances)
	if _, err := p.Create(ctx, claim("throttled-once", offering("m5.large", "us-east-1a", capacityOnDemand))); err != nil {
		t.Fatalf("create after two throttled attempts: %v", err)
	}
	f.mu.Lock()
	calls := f.calls["RunInstances"]
	f.throttle = -1
	f.mu.Unlock()
	if calls != 3 {
		t.Errorf("RunInstances sent %d times, want 3 (two throttled, then through)", calls)
	}
	_, err := p.Create(ctx, claim("throttled-always", offering("m5.large", "us-east-1a", capacityOnDemand)))
	if err == nil || cloudprovider.IsInsufficientCapacity(err) || !strings.Contains(err.Error(), "RequestLimitExceeded") || !strings.Contains(err.Error(), "throttled-always") {
		t.Errorf("create under a lasting throttle: %v, want an error naming the claim and RequestLimitExceeded", err)
	}
}

// TestOptions checks New's validation.
func TestOptions(t *testing.T) {
	for _, tc := range []struct {
		opts Options
		want string
	}{
		{Options{LaunchTemplate: "lt"}, "cluster name"},
		{Options{ClusterName: "c"}, "launch template"},
		{Options{ClusterName: "c", LaunchTemplate: "lt", LaunchMethod: "teleport"}, "unknown launch method"},
	} {
		if _, err := New(nil, tc.opts); err == nil || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%+v): %v, want %q", tc.opts, err, tc.want)
		}
	}
	if _, err := New(nil, Options{ClusterName: "c", LaunchTemplate: "lt"}); err != nil {
		t.Errorf("valid options: %v", err)
	}
}

func errorsAs(err error, target **cloudprovider.InsufficientCapacityError) bool {
	return errors.As(err, target)
}
