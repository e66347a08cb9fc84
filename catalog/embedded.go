package catalog

import (
	"bytes"
	"embed"
	"fmt"
	"io/fs"
	"os"
	"slices"
	"sort"
	"strings"
	"sync"
)

// The default AWS catalogs, written by ./internal/gen (go generate ./catalog) in the format of
// docs/catalog-format.md.
//
//go:embed data/aws-*.json
var embedded embed.FS

// ProviderAWS is the prefix of embedded catalog specs: "aws/us-east-1".
const ProviderAWS = "aws"

// parsed caches each embedded catalog after its first parse; callers get clones, so none can change another's.
var parsed sync.Map // region -> func() (*Catalog, error)

// Regions lists the regions that have an embedded catalog, sorted.
func Regions() []string {
	entries, err := fs.ReadDir(embedded, "data")
	if err != nil {
		// Unreachable: the directory is part of the binary.
		panic(fmt.Sprintf("catalog: embedded data: %v", err))
	}
	var regions []string
	for _, e := range entries {
		name := e.Name()
		if r, ok := strings.CutPrefix(name, ProviderAWS+"-"); ok && strings.HasSuffix(r, ".json") {
			regions = append(regions, strings.TrimSuffix(r, ".json"))
		}
	}
	sort.Strings(regions)
	return regions
}

// Embedded returns the embedded default AWS catalog of region. Each call returns a fresh copy.
func Embedded(region string) (*Catalog, error) {
	// Checking first keeps the cache to the few embedded regions, whatever names callers try.
	if !slices.Contains(Regions(), region) {
		return nil, unknownRegion(region)
	}
	load, _ := parsed.LoadOrStore(region, sync.OnceValues(func() (*Catalog, error) {
		data, err := embedded.ReadFile(embeddedPath(region))
		if err != nil {
			return nil, fmt.Errorf("catalog %s/%s: embedded data: %w", ProviderAWS, region, err)
		}
		c, err := parse(data)
		if err != nil {
			return nil, fmt.Errorf("catalog %s/%s: embedded data: %w", ProviderAWS, region, err)
		}
		return c, nil
	}))
	c, err := load.(func() (*Catalog, error))()
	if err != nil {
		return nil, err
	}
	return c.Clone(), nil
}

func embeddedPath(region string) string { return "data/" + ProviderAWS + "-" + region + ".json" }

func unknownRegion(region string) error {
	return fmt.Errorf("catalog %s/%s: unknown region (embedded regions: %s)", ProviderAWS, region, strings.Join(Regions(), ", "))
}

// EmbeddedJSON returns the raw JSON of an embedded catalog, e.g. to write it out for editing.
func EmbeddedJSON(region string) ([]byte, error) {
	if !slices.Contains(Regions(), region) {
		return nil, unknownRegion(region)
	}
	data, err := embedded.ReadFile(embeddedPath(region))
	if err != nil {
		return nil, fmt.Errorf("catalog %s/%s: embedded data: %w", ProviderAWS, region, err)
	}
	return bytes.Clone(data), nil
}

// Resolve returns the catalog a spec names: "aws/REGION" for an embedded default catalog, "synthetic/kwok" for
// KwokLike, or else the path of a catalog file. A path that looks like an embedded spec can be forced with a
// leading "./".
func Resolve(spec string) (*Catalog, error) {
	if spec == "" {
		return nil, fmt.Errorf("catalog: empty spec (want %s/REGION with REGION one of %s, synthetic/kwok, or a file path)", ProviderAWS, strings.Join(Regions(), ", "))
	}
	if region, ok := strings.CutPrefix(spec, ProviderAWS+"/"); ok && region != "" && !strings.ContainsAny(region, `/\.`) {
		return Embedded(region)
	}
	if spec == "synthetic/kwok" {
		return KwokLike(), nil
	}
	if _, err := os.Stat(spec); err != nil {
		return nil, fmt.Errorf("catalog %s: not an embedded catalog (%s/REGION with REGION one of %s, or synthetic/kwok) and not a readable file: %w", spec, ProviderAWS, strings.Join(Regions(), ", "), err)
	}
	return LoadFile(spec)
}
