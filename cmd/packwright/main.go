// Command packwright is Packwright's single binary: the in-cluster controller, offline what-if plans,
// benchmarks and catalog tools, one subcommand each.
package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"sort"
)

// command is one subcommand: it parses its own flags from args and writes to stdout.
type command struct {
	summary string
	run     func(ctx context.Context, args []string, stdout, stderr io.Writer) error
}

var commands = map[string]command{
	"version":    {summary: "print the version and the linked HiGHS", run: runVersion},
	"plan":       {summary: "what-if: plan the nodes for a cluster snapshot's pending pods, or with --consolidate the nodes to remove (table or JSON)", run: runPlan},
	"bench":      {summary: "run the benchmark suite and write a report with charts", run: runBench},
	"controller": {summary: "run the in-cluster autoscaler (controller-runtime manager)", run: runController},
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "Usage: packwright <command> [flags]\n\nCommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-10s %s\n", n, commands[n].summary)
	}
	fmt.Fprintln(w, "\nRun 'packwright <command> -h' for a command's flags.")
}

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}

func run(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stdout)
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "packwright: unknown command %q\n\n", args[0])
		usage(stderr)
		return 2
	}
	if err := cmd.run(context.Background(), args[1:], stdout, stderr); err != nil {
		if err == flag.ErrHelp {
			return 0
		}
		fmt.Fprintf(stderr, "packwright %s: %v\n", args[0], err)
		return 1
	}
	return 0
}
