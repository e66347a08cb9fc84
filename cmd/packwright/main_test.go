package main

import (
	"bytes"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

func TestRun(t *testing.T) {
	tests := []struct {
		name     string
		args     []string
		code     int
		contains string
	}{
		{"help", []string{"help"}, 0, "Commands:"},
		{"unknown command", []string{"frobnicate"}, 2, `unknown command "frobnicate"`},
		{"version", []string{"version"}, 0, "HiGHS "},
		{"bad flag", []string{"version", "-nope"}, 1, "flag provided but not defined"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			var out, errOut bytes.Buffer
			code := run(tc.args, &out, &errOut)
			if code != tc.code {
				t.Fatalf("exit code %d, want %d (stderr %q)", code, tc.code, errOut.String())
			}
			if got := out.String() + errOut.String(); !strings.Contains(got, tc.contains) {
				t.Fatalf("output %q does not contain %q", got, tc.contains)
			}
		})
	}
}

// TestControllerAWSFlags checks that the aws provider's settings are validated before anything starts, with
// errors that name the flag.
func TestControllerAWSFlags(t *testing.T) {
	kubeconfig := filepath.Join(t.TempDir(), "kubeconfig")
	// A cluster nobody serves: the checks under test come before any connection.
	if err := os.WriteFile(kubeconfig, []byte(`apiVersion: v1
kind: Config
clusters: [{name: c, cluster: {server: "https://127.0.0.1:1"}}]
users: [{name: u, user: {token: t}}]
contexts: [{name: c, context: {cluster: c, user: u}}]
current-context: c
`), 0o600); err != nil {
		t.Fatal(err)
	}
	base := []string{"controller", "--cloud-provider", "aws", "--cluster-name", "c", "--kubeconfig", kubeconfig}
	for _, tc := range []struct {
		name     string
		args     []string
		contains string
	}{
		{"no region", nil, "--region (or AWS_REGION) is required"},
		{"no launch template", []string{"--region", "us-east-1"}, "launch template name is required"},
		{"bad subnets", []string{"--region", "us-east-1", "--aws-launch-template", "lt", "--aws-subnets", "us-east-1a"}, `--aws-subnets: "us-east-1a" is not zone=subnet-id`},
		{"bad method", []string{"--region", "us-east-1", "--aws-launch-template", "lt", "--aws-launch-method", "teleport"}, `unknown launch method "teleport"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			t.Setenv("AWS_REGION", "")
			var out, errOut bytes.Buffer
			code := run(append(slices.Clone(base), tc.args...), &out, &errOut)
			if code == 0 || !strings.Contains(errOut.String(), tc.contains) {
				t.Errorf("exit %d, stderr %q; want an error containing %q", code, errOut.String(), tc.contains)
			}
		})
	}
}
