package cluster

import (
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"reflect"
	"slices"
	"strings"
)

// locateDecodeError finds the field of raw that made decoding into obj fail and returns an error naming it,
// such as "spec.containers[0].resources.requests[cpu]: quantities must match the regular expression ...".
// encoding/json reports custom unmarshalers' errors (resource.Quantity, metav1.Time) without any location, so
// the document is decoded again part by part, descending to the smallest part that still fails. This runs only
// after a failure, so its cost does not matter.
func locateDecodeError(raw []byte, obj any, err error) error {
	var v any
	if json.Unmarshal(raw, &v) != nil {
		return err // not JSON at all; cannot happen for documents the splitter produced
	}
	if path, leafErr := locate(v, reflect.TypeOf(obj).Elem(), ""); path != "" {
		return fmt.Errorf("%s: %s", path, describe(leafErr))
	}
	return errors.New(describe(err))
}

// locate returns the path of the deepest part of v that does not decode into t, and its error; "" when v
// decodes.
func locate(v any, t reflect.Type, path string) (string, error) {
	err := tryDecode(v, t)
	if err == nil {
		return "", nil
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if !reflect.PointerTo(t).Implements(reflect.TypeFor[json.Unmarshaler]()) {
		switch x := v.(type) {
		case map[string]any:
			switch t.Kind() {
			case reflect.Struct:
				if p, e := locateStruct(x, t, path); p != "" {
					return p, e
				}
			case reflect.Map:
				for _, k := range slices.Sorted(maps.Keys(x)) {
					if p, e := locate(x[k], t.Elem(), path+"["+k+"]"); p != "" {
						return p, e
					}
				}
			}
		case []any:
			if t.Kind() == reflect.Slice || t.Kind() == reflect.Array {
				for i, e := range x {
					if p, e := locate(e, t.Elem(), fmt.Sprintf("%s[%d]", path, i)); p != "" {
						return p, e
					}
				}
			}
		}
	}
	if path == "" {
		path = "(object)"
	}
	return path, err
}

// locateStruct descends into the fields of struct type t present in m, following encoding/json's rules for
// names: the json tag, else the Go name, matched case-insensitively; embedded structs without a tag are
// inlined.
func locateStruct(m map[string]any, t reflect.Type, path string) (string, error) {
	for i := range t.NumField() {
		f := t.Field(i)
		name, _, _ := strings.Cut(f.Tag.Get("json"), ",")
		if name == "-" {
			continue
		}
		ft := f.Type
		if f.Anonymous && name == "" {
			for ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				if p, e := locateStruct(m, ft, path); p != "" {
					return p, e
				}
				continue
			}
		}
		if !f.IsExported() {
			continue
		}
		if name == "" {
			name = f.Name
		}
		for k, fv := range m {
			if strings.EqualFold(k, name) {
				p := k
				if path != "" {
					p = path + "." + k
				}
				if lp, e := locate(fv, f.Type, p); lp != "" {
					return lp, e
				}
			}
		}
	}
	return "", nil
}

func tryDecode(v any, t reflect.Type) error {
	b, err := json.Marshal(v)
	if err != nil {
		return err
	}
	return json.Unmarshal(b, reflect.New(t).Interface())
}

// describe turns encoding/json's type errors, which speak of Go types, into a sentence about the input.
func describe(err error) string {
	var ute *json.UnmarshalTypeError
	if errors.As(err, &ute) {
		return fmt.Sprintf("want %s, got a JSON %s", jsonKind(ute.Type), ute.Value)
	}
	return err.Error()
}

func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "a boolean"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64,
		reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "an integer (" + t.Kind().String() + ")"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "a mapping"
	default:
		return t.String()
	}
}
