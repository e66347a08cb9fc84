package controller

import (
	"context"
	"errors"
	"fmt"
	"net/http"
	"time"

	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/runtime"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	ctrl "sigs.k8s.io/controller-runtime"
	"sigs.k8s.io/controller-runtime/pkg/client"
	ctrlconfig "sigs.k8s.io/controller-runtime/pkg/config"
	"sigs.k8s.io/controller-runtime/pkg/healthz"
	"sigs.k8s.io/controller-runtime/pkg/manager"
	metricsserver "sigs.k8s.io/controller-runtime/pkg/metrics/server"

	apiv1 "github.com/packwright/packwright/api/v1"
	"github.com/packwright/packwright/catalog"
	"github.com/packwright/packwright/cloudprovider"
	"github.com/packwright/packwright/controller/disruption"
	"github.com/packwright/packwright/controller/nodeclaim"
	"github.com/packwright/packwright/controller/provisioning"
	"github.com/packwright/packwright/controller/unavailable"
	"github.com/packwright/packwright/solver"
)

// Config configures the in-cluster controller. Zero values take the documented defaults.
type Config struct {
	// REST is how to reach the API server.
	REST *rest.Config
	// ClusterName names the cluster; it tags instances and names the leader-election lease.
	ClusterName string
	// Catalog prices and sizes offerings.
	Catalog *catalog.Catalog
	// CloudProvider launches instances. NewCloudProvider is called with the manager's client when
	// CloudProvider is nil (the sim provider needs it).
	CloudProvider    cloudprovider.CloudProvider
	NewCloudProvider func(c client.Client) (cloudprovider.CloudProvider, error)
	// Solver configures each solve (deadline default 1 s).
	Solver solver.Options
	// BatchIdle and BatchMax are the provisioning batch windows (defaults 1 s and 10 s).
	BatchIdle, BatchMax time.Duration
	// MetricsAddr serves /metrics (default ":8080"; "0" disables); ProbeAddr serves /healthz and /readyz
	// (default ":8081"; "0" disables).
	MetricsAddr, ProbeAddr string
	// LeaderElection enables leader election in LeaderElectionNamespace (needed when not running in a pod).
	LeaderElection          bool
	LeaderElectionNamespace string
	// NodeClaim tunes launch and registration timeouts and garbage collection.
	NodeClaim nodeclaim.Options
	// UnavailableTTL is how long an offering stays out of solves after a capacity error (default 3 min).
	UnavailableTTL time.Duration
	// Observe is called with every provisioning result (tests, benchmarks).
	Observe func(provisioning.Result)
	// Disruption configures consolidation (interval, deadline, move cost, minimum saving); its Catalog is set
	// from Catalog. DisableDisruption turns consolidation off.
	Disruption        disruption.Options
	DisableDisruption bool
	// SkipNameValidation lets one process build several managers (tests that restart the controller), which
	// controller-runtime otherwise refuses because their controllers' metrics would share names.
	SkipNameValidation bool
}

// Scheme knows the core Kubernetes types and Packwright's.
func Scheme() (*runtime.Scheme, error) {
	s := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(s); err != nil {
		return nil, err
	}
	if err := apiv1.AddToScheme(s); err != nil {
		return nil, err
	}
	return s, nil
}

// Run builds the manager and runs it until ctx is done or a component fails.
func Run(ctx context.Context, cfg Config) error {
	mgr, err := NewManager(ctx, cfg)
	if err != nil {
		return err
	}
	return mgr.Start(ctx)
}

// NewManager builds a manager with every Packwright controller registered, ready to Start.
func NewManager(ctx context.Context, cfg Config) (manager.Manager, error) {
	if cfg.REST == nil {
		return nil, errors.New("controller: no API server configuration")
	}
	if cfg.ClusterName == "" {
		return nil, errors.New("controller: cluster name is required (--cluster-name)")
	}
	if cfg.Catalog == nil {
		return nil, errors.New("controller: no catalog")
	}
	if cfg.CloudProvider == nil && cfg.NewCloudProvider == nil {
		return nil, errors.New("controller: no cloud provider")
	}
	if cfg.MetricsAddr == "" {
		cfg.MetricsAddr = ":8080"
	}
	if cfg.ProbeAddr == "" {
		cfg.ProbeAddr = ":8081"
	}
	scheme, err := Scheme()
	if err != nil {
		return nil, fmt.Errorf("controller: scheme: %w", err)
	}
	mgr, err := ctrl.NewManager(cfg.REST, ctrl.Options{
		Scheme:                        scheme,
		Metrics:                       metricsserver.Options{BindAddress: cfg.MetricsAddr},
		HealthProbeBindAddress:        cfg.ProbeAddr,
		LeaderElection:                cfg.LeaderElection,
		LeaderElectionID:              "packwright-" + cfg.ClusterName,
		LeaderElectionNamespace:       cfg.LeaderElectionNamespace,
		LeaderElectionReleaseOnCancel: true,
		Controller:                    ctrlconfig.Controller{SkipNameValidation: &cfg.SkipNameValidation},
		Client: client.Options{Cache: &client.CacheOptions{
			// Events are written, never read; leases are the elector's own business.
			DisableFor: []client.Object{&corev1.Event{}},
		}},
	})
	if err != nil {
		return nil, fmt.Errorf("controller: manager: %w", err)
	}
	if err := mgr.AddHealthzCheck("ping", healthz.Ping); err != nil {
		return nil, err
	}
	if err := mgr.AddReadyzCheck("cache", func(req *http.Request) error {
		if !mgr.GetCache().WaitForCacheSync(req.Context()) {
			return errors.New("informer caches not synced")
		}
		return nil
	}); err != nil {
		return nil, err
	}
	cloud := cfg.CloudProvider
	if cloud == nil {
		if cloud, err = cfg.NewCloudProvider(mgr.GetClient()); err != nil {
			return nil, fmt.Errorf("controller: cloud provider: %w", err)
		}
	}
	if err := nodeclaim.SetupIndexes(ctx, mgr); err != nil {
		return nil, err
	}
	unavail := unavailable.New(cfg.UnavailableTTL)
	recorder := mgr.GetEventRecorderFor("packwright")
	prov, err := provisioning.New(mgr.GetClient(), recorder, provisioning.Options{
		Catalog: cfg.Catalog, Solver: cfg.Solver, BatchIdle: cfg.BatchIdle, BatchMax: cfg.BatchMax,
		Unavailable: unavail, Observe: cfg.Observe,
	})
	if err != nil {
		return nil, err
	}
	if err := prov.SetupWithManager(mgr); err != nil {
		return nil, err
	}
	ncOpts := cfg.NodeClaim
	ncOpts.Unavailable = unavail
	ncOpts.OnCapacityError = prov.Trigger
	if ncOpts.Evictor == nil {
		if ncOpts.Evictor, err = nodeclaim.NewEvictor(mgr.GetConfig()); err != nil {
			return nil, fmt.Errorf("controller: %w", err)
		}
	}
	if err := nodeclaim.New(mgr.GetClient(), cloud, recorder, ncOpts).SetupWithManager(mgr); err != nil {
		return nil, err
	}
	if !cfg.DisableDisruption {
		dopts := cfg.Disruption
		dopts.Catalog = cfg.Catalog
		if err := mgr.Add(disruption.New(mgr.GetClient(), recorder, prov, dopts)); err != nil {
			return nil, fmt.Errorf("controller: disruption: %w", err)
		}
	}
	return mgr, nil
}
