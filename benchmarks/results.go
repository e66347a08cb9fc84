package benchmarks

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
)

// File names that WriteAll writes besides the charts.
const (
	ReportFile  = "report.md"
	ResultsFile = "results.json"
)

// Results are everything one run measured: the provisioning workloads' results and the consolidation
// workloads'. results.json holds them in this form.
type Results struct {
	Provisioning  []Result              `json:"provisioning"`
	Consolidation []ConsolidationResult `json:"consolidation"`
}

// failed counts the results with failures.
func (rs *Results) failed() int {
	n := 0
	for i := range rs.Provisioning {
		if rs.Provisioning[i].Failed() {
			n++
		}
	}
	for i := range rs.Consolidation {
		if rs.Consolidation[i].Failed() {
			n++
		}
	}
	return n
}

// WriteAll writes everything a run produces into dir: the charts (of the provisioning results), results.json
// (the results, machine-readable) and report.md, which shows the charts. It returns the names of the files
// written, report first.
func WriteAll(dir string, rs Results, info ReportInfo) ([]string, error) {
	charts, err := WriteCharts(dir, rs.Provisioning)
	if err != nil {
		return nil, err
	}
	info.Charts = charts
	data, err := json.MarshalIndent(rs, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	if err := os.WriteFile(filepath.Join(dir, ResultsFile), append(data, '\n'), 0o644); err != nil {
		return nil, fmt.Errorf("results: %w", err)
	}
	f, err := os.Create(filepath.Join(dir, ReportFile))
	if err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := WriteReport(f, rs, info); err != nil {
		f.Close()
		return nil, fmt.Errorf("report: %w", err)
	}
	if err := f.Close(); err != nil {
		return nil, fmt.Errorf("report: %w", err)
	}
	return append([]string{ReportFile, ResultsFile}, charts...), nil
}
