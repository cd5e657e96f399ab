package api

import (
	"context"
	"net/http"
	"net/http/httptest"
	"net/url"
	"testing"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"

	"github.com/petstore/orderd"
)

// TestValidatorsWhereTheContractDeclaresInput: every operation with a parameter is validated
// (listOrders for its If-None-Match header), and only the one without any is not.
func TestValidatorsWhereTheContractDeclaresInput(t *testing.T) {
	ct, err := loadContract()
	if err != nil {
		t.Fatal(err)
	}
	for op, want := range map[string]bool{"listOrders": true, "cancelOrder": true, "getPetById": true, "getOpenAPIDocument": false} {
		if got := len(ct.validators[op]) > 0; got != want {
			t.Errorf("%s: validated %v, want %v", op, got, want)
		}
	}
}

// TestNothingSentIsNothingToValidate holds the validators' shortcut to kin-openapi's own
// verdict: for every operation whose input is all optional, a request that sends none of it
// passes ValidateRequest, and one that sends a wrong value of any of it is not taken for
// one that sends nothing, and fails. Operations with a path parameter are always validated.
func TestNothingSentIsNothingToValidate(t *testing.T) {
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true}
	// A wrong value of each optional parameter of the documents.
	wrong := map[string]string{"If-None-Match": "garbage", "status": "lost", "petId": "-1",
		"shipDateFrom": "yesterday", "shipDateBefore": "tomorrow", "pageSize": "0", "pageToken": "!"}
	optional := map[string]bool{}
	for _, v := range orderd.Versions {
		doc, err := v.Load()
		if err != nil {
			t.Fatal(err)
		}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				in := optionalInputOf(item, op)
				optional[op.OperationID] = in != nil
				if in == nil {
					continue
				}
				unsecured := *op
				unsecured.Security = &openapi3.SecurityRequirements{}
				route := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured}
				validate := func(r *http.Request) error {
					return openapi3filter.ValidateRequest(context.Background(), &openapi3filter.RequestValidationInput{Request: r, Route: route, Options: opts})
				}
				bare := httptest.NewRequest(method, v.Base+path, nil)
				if !in.sentNone(bare) {
					t.Errorf("%s: a request with neither query nor headers is taken for one that sends input", op.OperationID)
				}
				if err := validate(bare); err != nil {
					t.Errorf("%s: a request that sends nothing fails validation: %v", op.OperationID, err)
				}
				for _, ref := range op.Parameters {
					p := ref.Value
					value, ok := wrong[p.Name]
					if !ok {
						t.Fatalf("%s: no wrong value for the parameter %s", op.OperationID, p.Name)
					}
					r := httptest.NewRequest(method, v.Base+path, nil)
					if p.In == openapi3.ParameterInQuery {
						r = httptest.NewRequest(method, v.Base+path+"?"+url.Values{p.Name: {value}}.Encode(), nil)
					} else {
						r.Header.Set(p.Name, value)
					}
					if in.sentNone(r) {
						t.Errorf("%s: a request that sends %s is taken for one that sends nothing", op.OperationID, p.Name)
					}
					if validate(r) == nil {
						t.Errorf("%s: %s=%q passes validation", op.OperationID, p.Name, value)
					}
				}
			}
		}
	}
	for op, want := range map[string]bool{"listOrders": true, "findOrders": true, "getOpenAPIDocument": true,
		"cancelOrder": false, "getPetById": false, "getOrder": false} {
		if got, ok := optional[op]; !ok || got != want {
			t.Errorf("%s: all input optional %v (known %v), want %v", op, got, ok, want)
		}
	}
}
