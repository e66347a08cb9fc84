package v1

import (
	"k8s.io/apimachinery/pkg/api/meta"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

// IsConditionTrue reports whether conditions hold a condition of the type with status True.
func IsConditionTrue(conditions []metav1.Condition, conditionType string) bool {
	return meta.IsStatusConditionTrue(conditions, conditionType)
}

// SetCondition sets a condition on the claim's status, keeping the transition time when the status is
// unchanged, and reports whether anything changed.
func (c *NodeClaim) SetCondition(conditionType string, status metav1.ConditionStatus, reason, message string) bool {
	return meta.SetStatusCondition(&c.Status.Conditions, metav1.Condition{
		Type: conditionType, Status: status, Reason: reason, Message: message, ObservedGeneration: c.Generation,
	})
}
