//go:build !cgo

package highs

import "context"

// Available reports whether HiGHS is linked into this binary: never, without cgo.
func Available() bool { return false }

// Version is empty without HiGHS.
func Version() string { return "" }

// Instance is a HiGHS model; without cgo every method returns ErrUnavailable.
type Instance struct{}

// New returns ErrUnavailable.
func New(context.Context, Options) (*Instance, error) { return nil, ErrUnavailable }

// Pass returns ErrUnavailable.
func (*Instance) Pass(context.Context, *Model) error { return ErrUnavailable }

// AddCols returns ErrUnavailable.
func (*Instance) AddCols(_ context.Context, cost, lower, upper []float64, start, rowIndex []int, value []float64, integer bool) error {
	return ErrUnavailable
}

// AddRows returns ErrUnavailable.
func (*Instance) AddRows(_ context.Context, lower, upper []float64, start, colIndex []int, value []float64) error {
	return ErrUnavailable
}

// SetIntegrality returns ErrUnavailable.
func (*Instance) SetIntegrality(context.Context, []bool) error { return ErrUnavailable }

// SetColBounds returns ErrUnavailable.
func (*Instance) SetColBounds(context.Context, int, float64, float64) error { return ErrUnavailable }

// SetColsBounds returns ErrUnavailable.
func (*Instance) SetColsBounds(context.Context, []int, []float64, []float64) error {
	return ErrUnavailable
}

// SetStart returns ErrUnavailable.
func (*Instance) SetStart(context.Context, map[int]float64) error { return ErrUnavailable }

// SetOptions returns ErrUnavailable.
func (*Instance) SetOptions(context.Context, Options) error { return ErrUnavailable }

// Run returns ErrUnavailable.
func (*Instance) Run(context.Context) (*Result, error) { return nil, ErrUnavailable }

// Close does nothing.
func (*Instance) Close() error { return nil }

// Release does nothing.
func (*Instance) Release() {}
