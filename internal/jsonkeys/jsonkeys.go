// Package jsonkeys checks the keys of a JSON value against the Go type it will be decoded into,
// before encoding/json decodes it: encoding/json matches keys case-insensitively and keeps the
// last of a repeated key, so {"id": "a", "ID": "b"} decodes as "b" without a word, even with
// DisallowUnknownFields. The HTTP API (pkg/serve) and the catalog reader (pkg/catalog) refuse
// such input with the key's path.
package jsonkeys

import (
	"encoding/json"
	"errors"
	"fmt"
	"reflect"
	"strings"
)

// Kinds of Error.
const (
	Duplicate = "duplicate_field"
	Unknown   = "unknown_field"
	TooDeep   = "too_deep"
)

// Error is a key refused at Path ("a.b[2].c"; "" for the value itself).
type Error struct {
	Kind, Path, Msg string
}

// Error implements error: "path: message".
func (e *Error) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return e.Path + ": " + e.Msg
}

// ErrMalformed stops Check at JSON it cannot read (every level returns it at once); the decoder
// that follows reports it, naming the byte.
var ErrMalformed = errors.New("malformed JSON")

// MaxDepth is the deepest nesting of objects and arrays Check follows before it refuses the
// value, so that a value of nothing but brackets costs nothing.
const MaxDepth = 64

// Check reads one JSON value from dec and checks that the keys of every object decoded into a
// struct of t are exactly its fields' JSON names (Fields), each once, and that no other object
// repeats a key. what names the top-level object in an unknown key's message ("this request",
// "a tool record"). It returns nil, an *Error, or ErrMalformed.
func Check(dec *json.Decoder, t reflect.Type, what string) error {
	return check(dec, t, what, "", 0)
}

func check(dec *json.Decoder, t reflect.Type, what, path string, depth int) error {
	for t != nil && t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	tok, err := dec.Token()
	if err != nil {
		return ErrMalformed
	}
	delim, ok := tok.(json.Delim)
	if !ok {
		return nil
	}
	if depth >= MaxDepth {
		return &Error{TooDeep, path, fmt.Sprintf("nested deeper than %d levels", MaxDepth)}
	}
	at := func(key string) string {
		if path == "" {
			return key
		}
		return path + "." + key
	}
	switch delim {
	case '{':
		var fields map[string]reflect.Type
		if t != nil && t.Kind() == reflect.Struct {
			fields = Fields(t)
		}
		seen := map[string]bool{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return ErrMalformed
			}
			key, _ := kt.(string)
			if seen[key] {
				return &Error{Duplicate, at(key), "appears more than once"}
			}
			seen[key] = true
			var next reflect.Type
			switch {
			case fields != nil:
				ft, ok := fields[key]
				if !ok {
					msg := "is not a field of " + what
					for name := range fields {
						if strings.EqualFold(name, key) {
							msg += fmt.Sprintf(" (field names are case-sensitive: %q)", name)
						}
					}
					return &Error{Unknown, at(key), msg}
				}
				next = ft
			case t != nil && t.Kind() == reflect.Map:
				next = t.Elem()
			}
			if err := check(dec, next, what, at(key), depth+1); err != nil {
				return err
			}
		}
	case '[':
		var elem reflect.Type
		if t != nil && (t.Kind() == reflect.Slice || t.Kind() == reflect.Array) {
			elem = t.Elem()
		}
		for i := 0; dec.More(); i++ {
			if err := check(dec, elem, what, fmt.Sprintf("%s[%d]", path, i), depth+1); err != nil {
				return err
			}
		}
	}
	if _, err := dec.Token(); err != nil { // the closing delimiter
		return ErrMalformed
	}
	return nil
}

// Fields maps the JSON names of struct type t's fields (encoding/json's rules: tags, "-",
// embedded structs) to their types.
func Fields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag := f.Tag.Get("json")
		if tag == "-" {
			continue
		}
		name, _, _ := strings.Cut(tag, ",")
		if f.Anonymous && name == "" {
			ft := f.Type
			if ft.Kind() == reflect.Pointer {
				ft = ft.Elem()
			}
			if ft.Kind() == reflect.Struct {
				for k, v := range Fields(ft) {
					if _, ok := out[k]; !ok {
						out[k] = v
					}
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
		out[name] = f.Type
	}
	return out
}
