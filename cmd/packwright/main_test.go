package main

import (
	"bytes"
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
