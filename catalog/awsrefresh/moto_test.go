package awsrefresh

import (
	"os"
	"testing"

	"github.com/packwright/packwright/internal/moto"
)

func TestMain(m *testing.M) {
	code := m.Run()
	moto.Stop()
	os.Exit(code)
}

// motoURL returns the base URL of the shared moto server; the AWS refresh is only tested against it.
func motoURL(t *testing.T) string { return moto.URL(t) }
