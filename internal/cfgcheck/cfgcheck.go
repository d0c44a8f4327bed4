// Package cfgcheck holds checks shared by every configuration reader, so a value that cannot be
// computed with is refused before any work, naming its key, rather than surfacing at the end of
// a run (NaN or ±Inf cannot even be written to JSON).
package cfgcheck

import (
	"fmt"
	"math"
	"reflect"
	"sort"
	"strings"
)

// Finite walks v (structs, pointers, slices, arrays and maps with string keys) and returns an
// error naming the first float that is NaN or ±Inf by its key path: prefix, then struct fields
// by their yaml tag (else their Go name), "[i]" for list items and ".key" for map entries, as
// in "policies[3].alpha".
func Finite(prefix string, v any) error {
	return finite(prefix, reflect.ValueOf(v))
}

func finite(key string, v reflect.Value) error {
	switch v.Kind() {
	case reflect.Float32, reflect.Float64:
		if f := v.Float(); math.IsNaN(f) || math.IsInf(f, 0) {
			return fmt.Errorf("%s = %v: must be a finite number", key, f)
		}
	case reflect.Pointer, reflect.Interface:
		if !v.IsNil() {
			return finite(key, v.Elem())
		}
	case reflect.Struct:
		t := v.Type()
		for i := 0; i < t.NumField(); i++ {
			f := t.Field(i)
			if !f.IsExported() {
				continue
			}
			if err := finite(join(key, fieldName(f)), v.Field(i)); err != nil {
				return err
			}
		}
	case reflect.Slice, reflect.Array:
		for i := 0; i < v.Len(); i++ {
			if err := finite(fmt.Sprintf("%s[%d]", key, i), v.Index(i)); err != nil {
				return err
			}
		}
	case reflect.Map:
		keys := v.MapKeys()
		sort.Slice(keys, func(i, j int) bool { return fmt.Sprint(keys[i]) < fmt.Sprint(keys[j]) })
		for _, k := range keys {
			if err := finite(join(key, fmt.Sprint(k)), v.MapIndex(k)); err != nil {
				return err
			}
		}
	}
	return nil
}

func fieldName(f reflect.StructField) string {
	if tag, _, _ := strings.Cut(f.Tag.Get("yaml"), ","); tag != "" && tag != "-" {
		return tag
	}
	return f.Name
}

func join(prefix, name string) string {
	if prefix == "" {
		return name
	}
	return prefix + "." + name
}
