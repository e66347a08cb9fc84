package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/packwright/packwright/solver/highs"
)

// version is set at link time (-ldflags "-X main.version=...").
var version = "dev"

func runVersion(_ context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	h := "not linked (built without cgo)"
	if highs.Available() {
		h = highs.Version()
	}
	fmt.Fprintf(stdout, "packwright %s\nHiGHS %s\n", version, h)
	return nil
}
