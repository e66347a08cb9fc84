package benchmarks

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/packwright/packwright/model"
)

// Peer schedulers run outside this module (Karpenter's needs other k8s.io versions), so problems and plans cross
// over as files in one directory: ExportProblems writes <slug>.problem.json for each workload, the peer writes
// <slug>.<peer>.json beside it, and Run (Options.PeerDir) reads those and validates each plan against the
// problem, as it does Packwright's.

// PeerKarpenter is the peer that benchmarks/karpenter runs: Karpenter's provisioning scheduler.
const PeerKarpenter = "karpenter"

// ProblemFile is the content of a <slug>.problem.json file. Problem is model.Problem in encoding/json's default
// form (Go field names).
type ProblemFile struct {
	Workload string         `json:"workload"`
	Pods     int            `json:"pods"`
	Problem  *model.Problem `json:"problem"`
}

// PeerFile is the content of a <slug>.<peer>.json file: the peer's plan in model.Plan's encoding/json form, with
// Offering, Group and Node indices into the exported problem.
type PeerFile struct {
	Workload string `json:"workload"`
	// Peer names the scheduler and its version, e.g. "karpenter v1.14.1".
	Peer string      `json:"peer"`
	Plan *model.Plan `json:"plan,omitempty"`
	// DurationNs is the wall time of the peer's scheduling call alone, in nanoseconds.
	DurationNs int64 `json:"durationNs"`
	// Error says why there is no plan: the peer failed, or the problem uses what the adapter cannot express.
	Error string `json:"error,omitempty"`
}

// Slug turns a workload name into a file name stem: "web/aws/us-east-1/100" becomes "web_aws_us-east-1_100".
func Slug(workload string) string {
	return strings.NewReplacer("/", "_", " ", "_", "\\", "_").Replace(workload)
}

// ExportProblems writes each workload's problem to dir as <slug>.problem.json and returns the file names.
func ExportProblems(dir string, ws []Workload) ([]string, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, fmt.Errorf("export: %w", err)
	}
	var files []string
	for _, w := range ws {
		p, err := w.Problem()
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", w.Name, err)
		}
		data, err := json.Marshal(ProblemFile{Workload: w.Name, Pods: w.Pods, Problem: p})
		if err != nil {
			return nil, fmt.Errorf("export %s: %w", w.Name, err)
		}
		name := Slug(w.Name) + ".problem.json"
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			return nil, fmt.Errorf("export %s: %w", w.Name, err)
		}
		files = append(files, name)
	}
	return files, nil
}

// readPeer reads the peer's file for workload from dir; false when there is none.
func readPeer(dir, peer, workload string) (*PeerFile, bool, error) {
	data, err := os.ReadFile(filepath.Join(dir, Slug(workload)+"."+peer+".json"))
	if errors.Is(err, fs.ErrNotExist) {
		return nil, false, nil
	}
	if err != nil {
		return nil, false, fmt.Errorf("peer %s: %w", peer, err)
	}
	var f PeerFile
	if err := json.Unmarshal(data, &f); err != nil {
		return nil, false, fmt.Errorf("peer %s: %s: %w", peer, workload, err)
	}
	if f.Workload != workload {
		return nil, false, fmt.Errorf("peer %s: file for %s holds workload %q", peer, workload, f.Workload)
	}
	return &f, true, nil
}

// peerOutcome validates a peer's plan against p, like Packwright's. The cost is recomputed from the offerings the
// plan names, so that every column prices nodes the same way.
func peerOutcome(p *model.Problem, f *PeerFile) Outcome {
	d := time.Duration(f.DurationNs)
	if f.Error != "" || f.Plan == nil {
		o := Outcome{Solver: f.Peer, Status: "error", Duration: d, Err: f.Error}
		if o.Err == "" {
			o.Err = "no plan"
		}
		return o
	}
	pl := *f.Plan
	pl.Cost = 0
	for _, nn := range pl.NewNodes {
		if nn.Offering >= 0 && nn.Offering < len(p.Offerings) {
			pl.Cost += p.Offerings[nn.Offering].Price
		}
	}
	pl.LowerBound = 0
	o := outcome(p, &pl, nil, d)
	o.Solver = f.Peer
	return o
}
