// Package safe runs the solvers' work aside, on goroutines of its own, without letting a panic there (a bug)
// end the process: the controller must keep running, and the portfolio falls back on the greedy plan.
package safe

import (
	"fmt"
	"runtime/debug"
	"sync"
)

// Panic is a recovered panic: its value and the stack where it happened.
type Panic struct {
	Value any
	Stack []byte
}

// Error says what panicked.
func (p *Panic) Error() string { return fmt.Sprintf("panic: %v", p.Value) }

// Go runs f on a goroutine of its own. A panic in f is recovered and handed to recovered (when not nil), on that
// goroutine, so that whoever waits for f's result still gets one.
func Go(f func(), recovered func(*Panic)) {
	go func() {
		defer func() {
			if r := recover(); r != nil && recovered != nil {
				recovered(&Panic{Value: r, Stack: debug.Stack()})
			}
		}()
		f()
	}()
}

// Workers runs n copies of f, each on a goroutine of its own, and waits for them all. A panic in any copy is
// raised again on the caller's goroutine once they have ended (the first one, if several panicked), where the
// caller's own recover sees it.
func Workers(n int, f func()) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	var first *Panic
	for range n {
		wg.Add(1)
		// Done after the panic is recorded, not deferred in f's goroutine (that would run before the recover).
		Go(func() {
			f()
			wg.Done()
		}, func(p *Panic) {
			mu.Lock()
			if first == nil {
				first = p
			}
			mu.Unlock()
			wg.Done()
		})
	}
	wg.Wait()
	if first != nil {
		panic(first)
	}
}
