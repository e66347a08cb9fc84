package nodeclaim

import (
	"context"
	"fmt"

	corev1 "k8s.io/api/core/v1"
	policyv1 "k8s.io/api/policy/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/rest"
)

// Evictor asks the API server to evict a pod through the Eviction API, which refuses with 429 Too Many
// Requests while a PodDisruptionBudget allows no disruption.
type Evictor interface {
	Evict(ctx context.Context, pod *corev1.Pod) error
}

// restEvictor posts evictions without client-go's retries: a refused eviction carries Retry-After, and client-go
// would otherwise sleep and retry it up to ten times inside one call, holding a reconcile worker for minutes
// instead of reporting the drain as blocked and coming back later.
type restEvictor struct{ client rest.Interface }

// NewEvictor returns an Evictor that talks to the API server at cfg.
func NewEvictor(cfg *rest.Config) (Evictor, error) {
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return nil, fmt.Errorf("eviction client: %w", err)
	}
	return restEvictor{client: cs.PolicyV1().RESTClient()}, nil
}

// Evict posts an Eviction for pod once.
func (e restEvictor) Evict(ctx context.Context, pod *corev1.Pod) error {
	eviction := &policyv1.Eviction{
		TypeMeta:   metav1.TypeMeta{APIVersion: "policy/v1", Kind: "Eviction"},
		ObjectMeta: metav1.ObjectMeta{Name: pod.Name, Namespace: pod.Namespace},
	}
	return e.client.Post().AbsPath("/api/v1").Namespace(pod.Namespace).Resource("pods").Name(pod.Name).
		SubResource("eviction").Body(eviction).MaxRetries(0).Do(ctx).Error()
}
