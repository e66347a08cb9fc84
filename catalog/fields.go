package catalog

import (
	"encoding/json"
	"fmt"
	"reflect"
	"sort"
	"strings"
)

// Field names as the JSON format spells them, taken from the struct tags so that they cannot drift.
var (
	catalogFields      = jsonFields(reflect.TypeFor[Catalog]())
	instanceTypeFields = jsonFields(reflect.TypeFor[InstanceType]())
	offeringFields     = jsonFields(reflect.TypeFor[Offering]())
	eniFields          = jsonFields(reflect.TypeFor[ENILimits]())
)

func jsonFields(t reflect.Type) map[string]bool {
	m := map[string]bool{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name != "" && name != "-" {
			m[name] = true
		}
	}
	return m
}

// checkFields reports a field the format does not define, naming the instance type (or offering) that holds it.
// encoding/json's DisallowUnknownFields alone is not enough: its message has no location and it matches field
// names case-insensitively, so "VCPU" would silently be read as "vcpu". Syntax errors are left to the decoder,
// whose messages carry offsets.
func checkFields(data []byte) error {
	var top map[string]json.RawMessage
	if json.Unmarshal(data, &top) != nil {
		return nil
	}
	if err := unknownField(top, catalogFields, ""); err != nil {
		return err
	}
	var types []map[string]json.RawMessage
	if raw, ok := top["instanceTypes"]; !ok || json.Unmarshal(raw, &types) != nil {
		return nil
	}
	for i, it := range types {
		where := fmt.Sprintf("instanceTypes[%d]", i)
		var name string
		if json.Unmarshal(it["name"], &name) == nil && name != "" {
			where = fmt.Sprintf("instance type %q", name)
		}
		if err := unknownField(it, instanceTypeFields, where+": "); err != nil {
			return err
		}
		var eni map[string]json.RawMessage
		if raw, ok := it["eni"]; ok && json.Unmarshal(raw, &eni) == nil {
			if err := unknownField(eni, eniFields, where+": eni: "); err != nil {
				return err
			}
		}
		var offs []map[string]json.RawMessage
		if raw, ok := it["offerings"]; ok && json.Unmarshal(raw, &offs) == nil {
			for j, o := range offs {
				if err := unknownField(o, offeringFields, fmt.Sprintf("%sofferings[%d]: ", where+": ", j)); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

func unknownField(obj map[string]json.RawMessage, known map[string]bool, where string) error {
	var bad []string
	for k := range obj {
		if !known[k] {
			bad = append(bad, k)
		}
	}
	if len(bad) == 0 {
		return nil
	}
	sort.Strings(bad)
	hint := ""
	for k := range known {
		if strings.EqualFold(k, bad[0]) {
			hint = fmt.Sprintf(" (did you mean %q?)", k)
		}
	}
	return fmt.Errorf("%sunknown field %q%s", where, bad[0], hint)
}
