package deploy

import (
	"encoding/json"
	"os"
	"reflect"
	"strings"
	"testing"

	awsprovider "github.com/packwright/packwright/cloudprovider/aws"
)

// TestIAMPolicy checks deploy/aws/iam-policy.json: valid JSON, every EC2 call of the aws provider allowed,
// TerminateInstances only on instances tagged for the cluster, CreateTags only while launching, and no wildcard
// action.
func TestIAMPolicy(t *testing.T) {
	raw, err := os.ReadFile("aws/iam-policy.json")
	if err != nil {
		t.Fatal(err)
	}
	var policy struct {
		Statement []struct {
			Sid       string
			Effect    string
			Action    any
			Condition map[string]map[string]any
		}
	}
	if err := json.Unmarshal(raw, &policy); err != nil {
		t.Fatalf("aws/iam-policy.json: %v", err)
	}
	allowed := map[string][]int{} // action → statements
	for i, st := range policy.Statement {
		var actions []string
		switch a := st.Action.(type) {
		case string:
			actions = []string{a}
		case []any:
			for _, x := range a {
				actions = append(actions, x.(string))
			}
		}
		for _, a := range actions {
			if strings.Contains(a, "*") {
				t.Errorf("statement %s allows the wildcard action %s", st.Sid, a)
			}
			if st.Effect == "Allow" {
				allowed[a] = append(allowed[a], i)
			}
		}
	}
	api := reflect.TypeFor[awsprovider.EC2API]()
	for i := range api.NumMethod() {
		action := "ec2:" + api.Method(i).Name
		if len(allowed[action]) == 0 {
			t.Errorf("the aws provider calls %s, which the policy does not allow", action)
		}
	}
	for _, sts := range [][]int{allowed["ec2:TerminateInstances"], allowed["ec2:CreateTags"]} {
		for _, i := range sts {
			if len(policy.Statement[i].Condition) == 0 {
				t.Errorf("statement %s allows %v without a condition", policy.Statement[i].Sid, policy.Statement[i].Action)
			}
		}
	}
	for _, i := range allowed["ec2:TerminateInstances"] {
		cond := policy.Statement[i].Condition["StringEquals"]
		if _, ok := cond["aws:ResourceTag/packwright.dev/cluster"]; !ok {
			t.Errorf("TerminateInstances is not limited to the cluster's instances: %v", cond)
		}
	}
	if len(allowed["iam:PassRole"]) == 0 {
		t.Error("the policy does not let the controller pass the node role to EC2")
	}
}
