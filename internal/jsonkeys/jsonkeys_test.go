package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
)

type inner struct {
	URL string `json:"url"`
}

type outer struct {
	ID    string           `json:"id"`
	Items []inner          `json:"items,omitempty"`
	Meta  map[string]inner `json:"meta"`
	Skip  string           `json:"-"`
	inner
}

// TestCheckByHand: the keys of every object decoded into a struct must be its JSON names, each
// once; map and free-form objects only must not repeat a key; malformed JSON is left to the
// decoder.
func TestCheckByHand(t *testing.T) {
	typ := reflect.TypeOf(outer{})
	for body, want := range map[string]string{
		`{"id":"a","items":[{"url":"x"}],"meta":{"k":{"url":"y"}},"url":"z"}`: "",
		`{"id":"a","id":"b"}`:                  "id: appears more than once",
		`{"ID":"a"}`:                           `ID: is not a field of a record (field names are case-sensitive: "id")`,
		`{"items":[{"url":"x"},{"Url":1}]}`:    `items[1].Url: is not a field of a record`,
		`{"meta":{"k":{"url":"y","url":"z"}}}`: "meta.k.url: appears more than once",
		`{"Skip":"x"}`:                         "Skip: is not a field",
		`{"id":`:                               "malformed JSON",
		`[1,2,{"a":1,"a":2}]`:                  "[2].a: appears more than once", // any object repeating a key
	} {
		err := Check(json.NewDecoder(strings.NewReader(body)), typ, "a record")
		if want == "" && err != nil || want != "" && (err == nil || !strings.Contains(err.Error(), want)) {
			t.Errorf("%s: %v, want %q", body, err, want)
		}
	}
	var ke *Error
	if err := Check(json.NewDecoder(strings.NewReader(strings.Repeat("[", MaxDepth+1))), nil, "x"); !errors.As(err, &ke) || ke.Kind != TooDeep {
		t.Errorf("deep nesting: %v", err)
	}
	if !reflect.DeepEqual(Fields(typ), map[string]reflect.Type{"id": reflect.TypeOf(""), "items": reflect.TypeOf([]inner{}),
		"meta": reflect.TypeOf(map[string]inner{}), "url": reflect.TypeOf("")}) {
		t.Errorf("Fields: %v", Fields(typ))
	}
}

// FuzzCheck: any input gives nil, an *Error or ErrMalformed, never a panic; when it gives nil
// for an object, decoding it with DisallowUnknownFields does not fail on an unknown field.
func FuzzCheck(f *testing.F) {
	for _, s := range []string{`{"id":"a"}`, `{"id":1,"id":2}`, `{"items":[{"url":"x"}]}`, `{"ID":"a"}`, `[[[[`, `{"meta":{"a":{}}}`} {
		f.Add([]byte(s))
	}
	typ := reflect.TypeOf(outer{})
	f.Fuzz(func(t *testing.T, b []byte) {
		err := Check(json.NewDecoder(bytes.NewReader(b)), typ, "a record")
		var ke *Error
		if err != nil && err != ErrMalformed && !errors.As(err, &ke) {
			t.Fatalf("%q: %T %v", b, err, err)
		}
		if err == nil && json.Valid(b) && bytes.HasPrefix(bytes.TrimSpace(b), []byte("{")) {
			dec := json.NewDecoder(bytes.NewReader(b))
			dec.DisallowUnknownFields()
			var v outer
			if derr := dec.Decode(&v); derr != nil && strings.Contains(derr.Error(), "unknown field") {
				t.Fatalf("%q passed the check but has an unknown field: %v", b, derr)
			}
		}
	})
}
