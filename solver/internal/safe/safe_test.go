package safe

import (
	"strings"
	"sync/atomic"
	"testing"
)

// A panic in Go's f reaches recovered, with its value and stack, and ends nothing else.
func TestGoRecovers(t *testing.T) {
	got := make(chan *Panic, 1)
	Go(func() { panic("a bug") }, func(p *Panic) { got <- p })
	p := <-got
	if p.Value != "a bug" || p.Error() != "panic: a bug" || !strings.Contains(string(p.Stack), "TestGoRecovers") {
		t.Fatalf("recovered %v (%q), stack:\n%s", p.Value, p.Error(), p.Stack)
	}
	ran := make(chan bool, 1)
	Go(func() { ran <- true }, func(*Panic) { t.Error("recovered without a panic") })
	if !<-ran {
		t.Fatal("f did not run")
	}
}

// Workers runs every copy and waits for them; a panic in one is raised again on the caller's goroutine after
// all have ended.
func TestWorkers(t *testing.T) {
	for _, tc := range []struct {
		name  string
		panic bool
	}{{"no panic", false}, {"one copy panics", true}} {
		t.Run(tc.name, func(t *testing.T) {
			var ran, first atomic.Int64
			var got any
			func() {
				defer func() { got = recover() }()
				Workers(4, func() {
					if tc.panic && first.Add(1) == 1 {
						panic("a bug")
					}
					ran.Add(1)
				})
			}()
			want := int64(4)
			if tc.panic {
				want = 3
			}
			if ran.Load() != want {
				t.Fatalf("%d copies ended normally before Workers returned, want %d", ran.Load(), want)
			}
			p, ok := got.(*Panic)
			if tc.panic != ok || (ok && p.Value != "a bug") {
				t.Fatalf("recovered %v on the caller's goroutine, want a panic: %v", got, tc.panic)
			}
		})
	}
}
