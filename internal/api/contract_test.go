package api

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strings"
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

// TestValidationIsValidateRequest holds the validators to kin-openapi's own verdict: for every
// operation of both documents, on requests that send nothing, each parameter alone, each
// wrong alone, all of them, and all of them wrong, the validation gives the error (the same
// text, nil for none) that ValidateRequest gives.
func TestValidationIsValidateRequest(t *testing.T) {
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true}
	// A valid and a wrong value of each parameter of the documents.
	values := map[string][2]string{"If-None-Match": {`W/"x"`, "garbage"}, "status": {"pending", "lost"},
		"petId": {"1", "-1"}, "orderId": {"1", "x"}, "shipDateFrom": {"2026-11-16T00:00:00Z", "yesterday"},
		"shipDateBefore": {"2026-11-23T00:00:00Z", "tomorrow"}, "pageSize": {"10", "0"}, "pageToken": {"abc", "!"}}
	ctx := context.Background()
	errs := 0
	for _, v := range orderd.Versions {
		doc, err := v.Load()
		if err != nil {
			t.Fatal(err)
		}
		for path, item := range doc.Paths.Map() {
			for method, op := range item.Operations() {
				if !hasInput(item, op) {
					continue
				}
				unsecured := *op
				unsecured.Security = &openapi3.SecurityRequirements{}
				route := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured}
				val := newValidation(route, opts, v.Name)
				var params []*openapi3.Parameter
				for _, ref := range append(slices.Clone(item.Parameters), op.Parameters...) {
					if _, ok := values[ref.Value.Name]; !ok {
						t.Fatalf("%s: no values for the parameter %s", op.OperationID, ref.Value.Name)
					}
					params = append(params, ref.Value)
				}
				// A request that sends the parameters of sent (path parameters always), each
				// wrong when wrong says so.
				request := func(sent, wrong func(*openapi3.Parameter) bool) {
					target, query, header, pathParams := path, url.Values{}, http.Header{}, map[string]string{}
					for _, p := range params {
						if p.In != openapi3.ParameterInPath && !sent(p) {
							continue
						}
						value := values[p.Name][0]
						if wrong(p) {
							value = values[p.Name][1]
						}
						switch p.In {
						case openapi3.ParameterInPath:
							target = strings.ReplaceAll(target, "{"+p.Name+"}", value)
							pathParams[p.Name] = value
						case openapi3.ParameterInQuery:
							query.Add(p.Name, value)
						case openapi3.ParameterInHeader:
							header.Set(p.Name, value)
						}
					}
					if len(query) > 0 {
						target += "?" + query.Encode()
					}
					want := openapi3filter.ValidateRequest(ctx, &openapi3filter.RequestValidationInput{
						Request: withHeader(httptest.NewRequest(method, target, nil), header), PathParams: pathParams, Route: route, Options: opts})
					var q url.Values // as validateRequest gives it: nil without a query
					if len(query) > 0 {
						q = query
					}
					got := val.check(ctx, withHeader(httptest.NewRequest(method, target, nil), header), pathParams, q)
					if fmt.Sprint(got) != fmt.Sprint(want) {
						t.Errorf("%s %s %v: validation %v, ValidateRequest %v", op.OperationID, target, header, got, want)
					}
					if want != nil {
						errs++
					}
				}
				none := func(*openapi3.Parameter) bool { return false }
				all := func(*openapi3.Parameter) bool { return true }
				request(none, none)
				request(all, none)
				request(all, all)
				for _, p := range params {
					this := func(q *openapi3.Parameter) bool { return q == p }
					request(this, none)
					request(this, this)
					request(all, this)
				}
			}
		}
	}
	if errs == 0 {
		t.Fatal("no request was wrong: the test compares nothing")
	}
}

func withHeader(r *http.Request, h http.Header) *http.Request {
	for name, v := range h {
		r.Header[name] = v
	}
	return r
}
