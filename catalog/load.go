package catalog

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
)

// Load reads a catalog in the JSON format of docs/catalog-format.md and validates it. Unknown fields (including
// known names spelled with another case, which encoding/json would otherwise accept) and trailing data are
// errors.
func Load(r io.Reader) (*Catalog, error) {
	data, err := io.ReadAll(r)
	if err != nil {
		return nil, fmt.Errorf("catalog: read: %w", err)
	}
	return parse(data)
}

// LoadFile loads the catalog file at path; errors name the file.
func LoadFile(path string) (*Catalog, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", path, err)
	}
	c, err := parse(data)
	if err != nil {
		return nil, fmt.Errorf("catalog %s: %w", path, err)
	}
	return c, nil
}

func parse(data []byte) (*Catalog, error) {
	// The field check runs first so that a misspelt field is reported as such, with the instance type that
	// holds it, rather than as the validation error its zero value would cause.
	if err := checkFields(data); err != nil {
		return nil, err
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	var c Catalog
	if err := dec.Decode(&c); err != nil {
		return nil, fmt.Errorf("decode: %w", err)
	}
	if _, err := dec.Token(); err != io.EOF {
		return nil, errors.New("decode: unexpected data after the catalog object")
	}
	if err := c.Validate(); err != nil {
		return nil, err
	}
	return &c, nil
}

// Write writes the catalog as indented JSON, instance types sorted by name, in the format Load reads.
func (c *Catalog) Write(w io.Writer) error {
	out := *c
	out.InstanceTypes = append([]InstanceType(nil), c.InstanceTypes...)
	sort.SliceStable(out.InstanceTypes, func(i, j int) bool { return out.InstanceTypes[i].Name < out.InstanceTypes[j].Name })
	if out.InstanceTypes == nil {
		out.InstanceTypes = []InstanceType{}
	}
	data, err := json.MarshalIndent(&out, "", "  ")
	if err != nil {
		return fmt.Errorf("catalog %s: encode: %w", c.Region, err)
	}
	data = append(data, '\n')
	if _, err := w.Write(data); err != nil {
		return fmt.Errorf("catalog %s: write: %w", c.Region, err)
	}
	return nil
}

// WriteFile writes the catalog to path atomically (a temporary file renamed into place), so that a reader never
// sees half a catalog.
func (c *Catalog) WriteFile(path string) error {
	var buf bytes.Buffer
	if err := c.Write(&buf); err != nil {
		return err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".catalog-*.json")
	if err != nil {
		return fmt.Errorf("catalog %s: %w", path, err)
	}
	defer os.Remove(tmp.Name()) // no-op after a successful rename
	if _, err := tmp.Write(buf.Bytes()); err != nil {
		tmp.Close()
		return fmt.Errorf("catalog %s: %w", path, err)
	}
	if err := tmp.Close(); err != nil {
		return fmt.Errorf("catalog %s: %w", path, err)
	}
	if err := os.Chmod(tmp.Name(), 0o644); err != nil {
		return fmt.Errorf("catalog %s: %w", path, err)
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return fmt.Errorf("catalog %s: %w", path, err)
	}
	return nil
}
