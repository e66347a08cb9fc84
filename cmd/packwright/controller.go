package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	awsconfig "github.com/aws/aws-sdk-go-v2/config"
	"github.com/aws/aws-sdk-go-v2/service/ec2"
	"go.uber.org/zap/zapcore"
	corev1 "k8s.io/api/core/v1"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"

	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cloudprovider"
	awsprovider "github.com/packwright/packwright/cloudprovider/aws"
	"github.com/packwright/packwright/cloudprovider/sim"
	"github.com/packwright/packwright/cluster"
	"github.com/packwright/packwright/controller"
	"github.com/packwright/packwright/controller/disruption"
	"github.com/packwright/packwright/controller/provisioning"
	"github.com/packwright/packwright/solver"
)

// runController runs the in-cluster controller until SIGINT or SIGTERM. Every flag can also be set through the
// environment as PACKWRIGHT_<FLAG> (upper case, dashes as underscores); a flag on the command line wins.
func runController(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("controller", flag.ContinueOnError)
	fs.SetOutput(stderr)
	clusterName := fs.String("cluster-name", "", "cluster name; tags instances and names the leader-election lease (required)")
	provider := fs.String("cloud-provider", "aws", "cloud provider: sim or aws")
	region := fs.String("region", os.Getenv("AWS_REGION"), "cloud region")
	catalogSpec := fs.String("catalog", "", "catalog: aws/REGION, synthetic/kwok or a file (default aws/<region>, synthetic/kwok for sim)")
	solverKind := fs.String("solver", "auto", "solver: auto, mip or greedy")
	deadline := fs.Duration("solve-deadline", solver.DefaultDeadline, "deadline of each provisioning solve")
	batchIdle := fs.Duration("batch-idle", time.Second, "close a batch of pending pods after this long without a new one")
	batchMax := fs.Duration("batch-max", 10*time.Second, "close a batch of pending pods after this long at most")
	metricsAddr := fs.String("metrics-bind-address", ":8080", "address of the Prometheus /metrics endpoint (0 disables)")
	probeAddr := fs.String("health-probe-bind-address", ":8081", "address of /healthz and /readyz (0 disables)")
	leaderElect := fs.Bool("leader-elect", true, "elect a leader among replicas")
	leaderNS := fs.String("leader-election-namespace", "", "namespace of the leader-election lease (default: the pod's)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig file (default: in-cluster configuration)")
	logLevel := fs.String("log-level", "info", "log level: debug, info, warn or error (logs are JSON)")
	consolidation := fs.Bool("consolidation", true, "disruption: consolidate (remove and replace nodes to lower the cluster's cost) and replace expired and drifted nodes")
	consolidationInterval := fs.Duration("consolidation-interval", 30*time.Second, "time between consolidation decisions")
	consolidationDeadline := fs.Duration("consolidation-deadline", 5*time.Second, "deadline of each consolidation solve")
	spotToSpot := fs.Bool("spot-to-spot-consolidation", false, "let consolidation replace spot nodes by cheaper spot nodes (needs 15 cheaper spot instance types)")
	simReady := fs.Duration("sim-ready-delay", 5*time.Second, "sim provider: time until a new node is Ready")
	launchTemplate := fs.String("aws-launch-template", "", "aws provider: launch template name (required for aws)")
	launchMethod := fs.String("aws-launch-method", awsprovider.LaunchFleet, "aws provider: fleet (CreateFleet instant) or run-instances")
	subnets := fs.String("aws-subnets", "", "aws provider: zone=subnet-id pairs, comma separated (default: each zone's default subnet)")
	endpoint := fs.String("aws-endpoint", "", "aws provider: EC2 endpoint URL override, e.g. a local emulator")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "Usage: packwright controller [flags]\n\nRuns the in-cluster autoscaler. Every flag may be set as PACKWRIGHT_<FLAG> in the environment.\n\nFlags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return err
	}
	if err := flagsFromEnv(fs); err != nil {
		return err
	}
	level, err := zapcore.ParseLevel(*logLevel)
	if err != nil {
		return fmt.Errorf("--log-level %q: want debug, info, warn or error", *logLevel)
	}
	ctrl.SetLogger(zap.New(zap.JSONEncoder(), zap.Level(level), zap.WriteTo(stderr)))
	kind, err := solver.ParseKind(*solverKind)
	if err != nil {
		return fmt.Errorf("--solver: %w", err)
	}
	spec := *catalogSpec
	if spec == "" {
		switch {
		case *provider == sim.Name:
			spec = "synthetic/kwok"
		case *region != "":
			spec = "aws/" + *region
		default:
			return fmt.Errorf("--region (or AWS_REGION) is required for the %s provider's default catalog", *provider)
		}
	}
	cat, err := catalog.Resolve(spec)
	if err != nil {
		return fmt.Errorf("--catalog: %w", err)
	}
	restCfg, err := cluster.LiveOptions{Kubeconfig: *kubeconfig}.RESTConfig()
	if err != nil {
		return err
	}
	restCfg.QPS, restCfg.Burst = 200, 400 // a burst of NodeClaims and events must not queue for minutes
	cfg := controller.Config{
		REST: restCfg, ClusterName: *clusterName, Catalog: cat,
		Solver:    solver.Options{Deadline: *deadline, Kind: kind},
		BatchIdle: *batchIdle, BatchMax: *batchMax,
		MetricsAddr: *metricsAddr, ProbeAddr: *probeAddr,
		LeaderElection: *leaderElect, LeaderElectionNamespace: *leaderNS,
		DisableDisruption: !*consolidation,
		Disruption: disruption.Options{Interval: *consolidationInterval, Deadline: *consolidationDeadline,
			Consolidation: solver.ConsolidationOptions{SpotToSpot: *spotToSpot}},
	}
	switch *provider {
	case sim.Name:
		cfg.NewCloudProvider = func(c client.Client) (cloudprovider.CloudProvider, error) {
			return sim.New(c, sim.Options{ReadyDelay: *simReady, Describe: DescribeFromCatalog(cat)}), nil
		}
	case awsprovider.Name:
		p, err := newAWSProvider(ctx, *clusterName, *region, *launchTemplate, *launchMethod, *subnets, *endpoint, cat)
		if err != nil {
			return fmt.Errorf("--cloud-provider aws: %w", err)
		}
		cfg.CloudProvider = p
	default:
		return fmt.Errorf("--cloud-provider %q: want sim or aws", *provider)
	}
	ctx, stop := signal.NotifyContext(ctx, syscall.SIGINT, syscall.SIGTERM)
	defer stop()
	return controller.Run(ctx, cfg)
}

// flagsFromEnv sets every flag not given on the command line from PACKWRIGHT_<FLAG>.
func flagsFromEnv(fs *flag.FlagSet) error {
	given := map[string]bool{}
	fs.Visit(func(f *flag.Flag) { given[f.Name] = true })
	var err error
	fs.VisitAll(func(f *flag.Flag) {
		if given[f.Name] || err != nil {
			return
		}
		env := "PACKWRIGHT_" + strings.ToUpper(strings.ReplaceAll(f.Name, "-", "_"))
		if v, ok := os.LookupEnv(env); ok {
			if e := fs.Set(f.Name, v); e != nil {
				err = fmt.Errorf("%s=%q: %w", env, v, e)
			}
		}
	})
	return err
}

// DescribeFromCatalog gives the sim provider the labels, capacity and allocatable of an offering from cat, as
// the provisioner counted them.
func DescribeFromCatalog(cat *catalog.Catalog) func(string, string, string) (map[string]string, corev1.ResourceList, corev1.ResourceList, bool) {
	return func(instanceType, zone, capacityType string) (map[string]string, corev1.ResourceList, corev1.ResourceList, bool) {
		it, ok := cat.ByName(instanceType)
		if !ok {
			return nil, nil, nil, false
		}
		return it.Labels(cat.Region, zone, capacityType, ""), provisioning.ResourceList(it.Capacity(nil)), provisioning.ResourceList(it.Allocatable(nil)), true
	}
}

// newAWSProvider builds the EC2 provider from the SDK's default credential chain (IRSA, pod identity, instance
// profile, environment) and the flags.
func newAWSProvider(ctx context.Context, clusterName, region, launchTemplate, method, subnets, endpoint string, cat *catalog.Catalog) (*awsprovider.Provider, error) {
	if region == "" {
		return nil, errors.New("--region (or AWS_REGION) is required")
	}
	zoneSubnets := map[string]string{}
	for _, pair := range strings.Split(subnets, ",") {
		if pair = strings.TrimSpace(pair); pair == "" {
			continue
		}
		zone, subnet, ok := strings.Cut(pair, "=")
		if !ok || zone == "" || subnet == "" {
			return nil, fmt.Errorf("--aws-subnets: %q is not zone=subnet-id", pair)
		}
		zoneSubnets[zone] = subnet
	}
	awsCfg, err := awsconfig.LoadDefaultConfig(ctx, awsconfig.WithRegion(region))
	if err != nil {
		return nil, fmt.Errorf("load AWS configuration: %w", err)
	}
	client := ec2.NewFromConfig(awsCfg, func(o *ec2.Options) {
		if endpoint != "" {
			o.BaseEndpoint = &endpoint
		}
	})
	return awsprovider.New(client, awsprovider.Options{
		ClusterName: clusterName, LaunchTemplate: launchTemplate, LaunchMethod: method, Subnets: zoneSubnets,
		Describe: DescribeFromCatalog(cat),
	})
}
