package api

import (
	"errors"
	"testing"
	"time"

	"github.com/petstore/orderd/internal/order"
)

func TestBearerToken(t *testing.T) {
	for _, tc := range []struct {
		values []string
		token  string
		err    error
	}{
		{nil, "", errNoCredentials},
		{[]string{"Bearer abc"}, "abc", nil},
		{[]string{"bearer abc"}, "abc", nil},
		{[]string{"BeArEr  abc=="}, "abc==", nil},
		{[]string{"Bearer a-b.c_d~e+f/g"}, "a-b.c_d~e+f/g", nil},
		{[]string{"Bearer"}, "", errMalformed},
		{[]string{"Bearer "}, "", errMalformed},
		{[]string{"Bearer =="}, "", errMalformed},
		{[]string{"Basic abc"}, "", errMalformed},
		{[]string{"Bearer a b"}, "", errMalformed},
		{[]string{"Bearer a\x00b"}, "", errMalformed},
		{[]string{"Bearer ab=c"}, "", errMalformed},
		{[]string{"Bearer abc", "Bearer abc"}, "", errMalformed},
		{[]string{""}, "", errMalformed},
	} {
		token, err := bearerToken(tc.values)
		if token != tc.token || !errors.Is(err, tc.err) {
			t.Errorf("bearerToken(%q) = %q, %v; want %q, %v", tc.values, token, err, tc.token, tc.err)
		}
	}
}

func FuzzBearerToken(f *testing.F) {
	for _, s := range []string{"Bearer abc", "bearer x==", "Basic y", "", "Bearer  a b"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		token, err := bearerToken([]string{s})
		if err == nil && (token == "" || !isToken68(token)) {
			t.Fatalf("accepted %q as token %q", s, token)
		}
	})
}

// TestANewKeyIsABearerToken: every key order.NewKey makes passes as a bearer token.
func TestANewKeyIsABearerToken(t *testing.T) {
	for range 100 {
		k, _, err := order.NewKey("a", order.Pro, order.Limits{}, time.Now())
		if err != nil {
			t.Fatal(err)
		}
		if _, err := bearerToken([]string{"Bearer " + k}); err != nil {
			t.Fatalf("%q is not a valid bearer token: %v", k, err)
		}
	}
}
