package main

import (
	"bytes"
	"os"
	"path/filepath"
	"testing"
)

// TestDataUpToDate fails when catalog/data differs from what the table generates, i.e. when someone edited the
// table without running `go generate ./catalog`, or edited the JSON by hand.
func TestDataUpToDate(t *testing.T) {
	for _, r := range regions {
		c, err := build(r)
		if err != nil {
			t.Fatalf("%s: %v", r.name, err)
		}
		var want bytes.Buffer
		if err := c.Write(&want); err != nil {
			t.Fatal(err)
		}
		path := filepath.Join("..", "..", "data", "aws-"+r.name+".json")
		got, err := os.ReadFile(path)
		if err != nil {
			t.Fatal(err)
		}
		if !bytes.Equal(got, want.Bytes()) {
			t.Errorf("%s is stale: run `go generate ./catalog`", path)
		}
	}
}

func TestVCPUs(t *testing.T) {
	f := family{metalCPU: map[string]int{"metal": 96}}
	for size, want := range map[string]int{"large": 2, "xlarge": 4, "2xlarge": 8, "9xlarge": 36, "48xlarge": 192, "metal": 96} {
		if got, err := f.vcpus(size); err != nil || got != want {
			t.Errorf("vcpus(%s) = %d, %v; want %d", size, got, err, want)
		}
	}
	for _, bad := range []string{"medium", "metal-48xl", "xxlarge"} {
		if _, err := f.vcpus(bad); err == nil {
			t.Errorf("vcpus(%s) succeeded", bad)
		}
	}
}
