package e2e

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	corev1 "k8s.io/api/core/v1"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/runtime"
	"k8s.io/apimachinery/pkg/util/wait"
	clientgoscheme "k8s.io/client-go/kubernetes/scheme"
	"k8s.io/client-go/rest"
	"sigs.k8s.io/controller-runtime/pkg/client"
	"sigs.k8s.io/controller-runtime/pkg/envtest"

	v1 "github.com/packwright/packwright/api/v1"
)

// EnvControlPlane names the environment variable holding the folder with etcd, kube-apiserver and
// kube-scheduler, as printed by hack/install-control-plane.sh.
const EnvControlPlane = "PACKWRIGHT_CONTROL_PLANE"

// startTimeout bounds each control-plane component's start and the harness's own setup steps.
const startTimeout = 60 * time.Second

// Options configure Start.
type Options struct {
	// CRDDirectoryPaths are folders of CRD manifests to install, e.g. the repository's deploy/crds.
	CRDDirectoryPaths []string
}

// Harness is a running control plane: etcd and kube-apiserver (through envtest) and a kube-scheduler process.
type Harness struct {
	// Env is the envtest environment running etcd and kube-apiserver.
	Env *envtest.Environment
	// Config is an admin REST config for the API server.
	Config *rest.Config
	// Scheme knows the built-in types and Packwright's api/v1.
	Scheme *runtime.Scheme
	// Client is an uncached admin client, so reads see every write at once.
	Client client.Client

	scheduler *process
	dir       string
}

// Start brings up the control plane from the folder in $PACKWRIGHT_CONTROL_PLANE, installs the CRDs, creates
// the default ServiceAccount (no kube-controller-manager runs to do it) and starts kube-scheduler. Call Stop
// when done, also after a failed test.
func Start(ctx context.Context, opts Options) (_ *Harness, err error) {
	bin, err := controlPlaneDir()
	if err != nil {
		return nil, err
	}
	scheme := runtime.NewScheme()
	if err := clientgoscheme.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	if err := v1.AddToScheme(scheme); err != nil {
		return nil, fmt.Errorf("building scheme: %w", err)
	}
	dir, err := os.MkdirTemp("", "packwright-e2e-")
	if err != nil {
		return nil, fmt.Errorf("creating harness folder: %w", err)
	}
	h := &Harness{Scheme: scheme, dir: dir}
	defer func() {
		if err != nil {
			err = errors.Join(err, h.Stop())
		}
	}()

	h.Env = &envtest.Environment{
		Scheme:                   scheme,
		BinaryAssetsDirectory:    bin,
		CRDDirectoryPaths:        opts.CRDDirectoryPaths,
		ErrorIfCRDPathMissing:    len(opts.CRDDirectoryPaths) > 0,
		ControlPlaneStartTimeout: startTimeout,
		ControlPlaneStopTimeout:  startTimeout,
	}
	// Explicit paths, so that a stray KUBEBUILDER_ASSETS cannot swap in other binaries.
	h.Env.ControlPlane.GetAPIServer().Path = filepath.Join(bin, "kube-apiserver")
	h.Env.ControlPlane.Etcd = &envtest.Etcd{Path: filepath.Join(bin, "etcd")}
	if h.Config, err = h.Env.Start(); err != nil {
		return nil, fmt.Errorf("starting etcd and kube-apiserver from %s: %w", bin, err)
	}
	if h.Client, err = client.New(h.Config, client.Options{Scheme: scheme}); err != nil {
		return nil, fmt.Errorf("creating client: %w", err)
	}
	if err := h.createDefaultServiceAccount(ctx); err != nil {
		return nil, err
	}
	kubeconfig := filepath.Join(dir, "scheduler.kubeconfig")
	if err := os.WriteFile(kubeconfig, h.Env.KubeConfig, 0o600); err != nil {
		return nil, fmt.Errorf("writing the scheduler's kubeconfig: %w", err)
	}
	h.scheduler, err = startProcess(filepath.Join(bin, "kube-scheduler"), filepath.Join(dir, "kube-scheduler.log"),
		"--kubeconfig="+kubeconfig, "--leader-elect=false", "--secure-port=0", "--v=2")
	if err != nil {
		return nil, err
	}
	return h, nil
}

// Stop stops kube-scheduler, kube-apiserver and etcd and removes the harness's files. It is safe to call on a
// partly started harness.
func (h *Harness) Stop() error {
	var errs []error
	if h.scheduler != nil {
		if err := h.scheduler.stop(10 * time.Second); err != nil {
			errs = append(errs, err)
		}
	}
	if h.Env != nil && h.Config != nil {
		if err := h.Env.Stop(); err != nil {
			errs = append(errs, fmt.Errorf("stopping etcd and kube-apiserver: %w", err))
		}
	}
	if h.dir != "" {
		if err := os.RemoveAll(h.dir); err != nil {
			errs = append(errs, fmt.Errorf("removing harness folder: %w", err))
		}
	}
	return errors.Join(errs...)
}

// SchedulerLog returns the end of kube-scheduler's log and, if it has exited, how, for failure messages.
func (h *Harness) SchedulerLog() string {
	if h.scheduler == nil {
		return "(kube-scheduler not started)"
	}
	return h.scheduler.tail(4000)
}

// createDefaultServiceAccount creates default/default, without which the ServiceAccount admission plugin refuses
// pods. The default namespace may appear a moment after the API server reports ready, so it retries.
func (h *Harness) createDefaultServiceAccount(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, startTimeout)
	defer cancel()
	var last error
	err := wait.PollUntilContextCancel(ctx, 200*time.Millisecond, true, func(ctx context.Context) (bool, error) {
		sa := &corev1.ServiceAccount{ObjectMeta: metav1.ObjectMeta{Name: "default", Namespace: metav1.NamespaceDefault}}
		last = h.Client.Create(ctx, sa)
		return last == nil || apierrors.IsAlreadyExists(last), nil
	})
	if err != nil {
		return fmt.Errorf("creating the default ServiceAccount: %w (last error: %v)", err, last)
	}
	return nil
}

// controlPlaneDir returns $PACKWRIGHT_CONTROL_PLANE after checking that it holds the three binaries.
func controlPlaneDir() (string, error) {
	dir := os.Getenv(EnvControlPlane)
	if dir == "" {
		return "", fmt.Errorf("%s is not set: it must name the folder holding etcd, kube-apiserver and kube-scheduler; "+
			"run the end-to-end tests through make, or export %s=\"$(hack/install-control-plane.sh)\" (see docs/testing.md)",
			EnvControlPlane, EnvControlPlane)
	}
	for _, name := range []string{"etcd", "kube-apiserver", "kube-scheduler"} {
		fi, err := os.Stat(filepath.Join(dir, name))
		if err != nil {
			return "", fmt.Errorf("%s=%s: %w (rerun hack/install-control-plane.sh)", EnvControlPlane, dir, err)
		}
		if fi.IsDir() || fi.Mode()&0o111 == 0 {
			return "", fmt.Errorf("%s=%s: %s is not an executable file", EnvControlPlane, dir, name)
		}
	}
	return dir, nil
}
