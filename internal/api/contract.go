package api

import (
	"net/http"
	"strings"

	"github.com/getkin/kin-openapi/openapi3"
	"github.com/getkin/kin-openapi/openapi3filter"
	"github.com/getkin/kin-openapi/routers"
	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd"
)

// contract is what the documents of every version (orderd.Versions) say about each operation,
// in the forms the chain needs, built once from the documents when the handler is made.
type contract struct {
	// bases are the paths the versions are served under, oldest first: "/v1", "/v2".
	bases []string
	// basesSlash are the bases followed by a slash, the prefix of every path under them.
	basesSlash []string
	// routes are the operations by echo route ("/v1/store/orders/:orderId", with the base of
	// their version), then by method: looked up once per request (operationAt), without a
	// "METHOD route" key to build.
	routes map[string]map[string]*operation
	// labels is the prefix of the labels of each version's operations, by base: "" for the
	// first, "v2." for /v2.
	labels map[string]string
	// validators checks a request against its operation, by label; none for an operation
	// that declares no parameters and no body.
	validators map[string][]echo.MiddlewareFunc
}

// operation is what the contract says of one route of one method.
type operation struct {
	// label is the metrics label: the operationId, prefixed by the version ("v2.findOrders")
	// for every version after the first, whose labels stay as they were before there was a
	// second. One label value per operation, and a bounded number in all.
	label string
	// public is an operation whose security is empty: it needs no key (it is still rate
	// limited, by client address, unless unlimited).
	public bool
	// unlimited is an operation whose success declares no rate-limit headers: static and
	// public (the document), neither limited nor authenticated.
	unlimited bool
}

func loadContract() (*contract, error) {
	ct := &contract{routes: map[string]map[string]*operation{}, labels: map[string]string{},
		validators: map[string][]echo.MiddlewareFunc{}}
	for i, v := range orderd.Versions {
		doc, err := v.Load()
		if err != nil {
			return nil, err
		}
		label := ""
		if i > 0 {
			label = strings.TrimPrefix(v.Base, "/") + "."
		}
		ct.bases = append(ct.bases, v.Base)
		ct.basesSlash = append(ct.basesSlash, v.Base+"/")
		ct.labels[v.Base] = label
		ct.addVersion(doc, v.Name, v.Base, label)
	}
	return ct, nil
}

// addVersion adds the operations of one version's document, the file name, served under base
// and labelled label+operationId.
func (ct *contract) addVersion(doc *openapi3.T, name, base, label string) {
	// Echo has routed the request before validation runs, so the operation is known and
	// kin-openapi's router (which would match the document's production server URLs, not the
	// address the service is reached at) is not needed.
	// The request is left as sent: kin-openapi would write the parameters' defaults into its
	// query, and the find's Link repeats the query as the client sent it. The handlers apply
	// the defaults (defaultPageSize).
	opts := &openapi3filter.Options{AuthenticationFunc: openapi3filter.NoopAuthenticationFunc, SkipSettingDefaults: true}
	for path, item := range doc.Paths.Map() {
		for method, op := range item.Operations() {
			o := &operation{label: label + op.OperationID}
			if op.Security != nil && len(*op.Security) == 0 {
				o.public, o.unlimited = true, !declaresRateLimit(op)
			}
			route := base + echoPath(path)
			if ct.routes[route] == nil {
				ct.routes[route] = map[string]*operation{}
			}
			ct.routes[route][method] = o
			if method == http.MethodGet { // answered for HEAD too (routes.go)
				ct.routes[route][http.MethodHead] = o
			}
			if !hasInput(item, op) {
				continue // nothing to validate: ValidateRequest would check nothing
			}
			// admit has authenticated the request already; a copy of the operation without
			// security keeps kin-openapi from checking it again on every request.
			unsecured := *op
			unsecured.Security = &openapi3.SecurityRequirements{}
			r := &routers.Route{Spec: doc, Path: path, PathItem: item, Method: method, Operation: &unsecured}
			ct.validators[label+op.OperationID] = []echo.MiddlewareFunc{validateRequest(newValidation(r, opts, name))}
		}
	}
}

// validatorsOf are the validators of the version served under base by operationId, as its
// generated RegisterHandlersOptions.OperationMiddlewares takes them.
func (ct *contract) validatorsOf(base string) map[string][]echo.MiddlewareFunc {
	label := ct.labels[base]
	out := map[string][]echo.MiddlewareFunc{}
	for name, v := range ct.validators {
		if op, ok := strings.CutPrefix(name, label); ok && (label != "" || !strings.Contains(name, ".")) {
			out[op] = v
		}
	}
	return out
}

// underBase reports whether path is under the base of a version: where requests are
// authenticated and rate limited.
func (ct *contract) underBase(path string) bool {
	for i, base := range ct.bases {
		if path == base || strings.HasPrefix(path, ct.basesSlash[i]) {
			return true
		}
	}
	return false
}

// operationAt is the operation of the request's route and method, or nil for a route outside
// the contract, or a method it does not serve there.
func (ct *contract) operationAt(c echo.Context) *operation {
	return ct.routes[c.Path()][c.Request().Method]
}

// declaresRateLimit reports whether the operation's 200 answer declares the rate-limit
// headers: the contract's word on whether the operation is limited.
func declaresRateLimit(op *openapi3.Operation) bool {
	ok := op.Responses.Status(http.StatusOK)
	return ok == nil || ok.Value == nil || ok.Value.Headers["X-RateLimit-Limit"] != nil
}

// labelOf is the metrics label of the request, whose operation is op (operationAt): its
// operationId, the route itself for the few fixed routes outside the contract (/healthz,
// /readyz, /metrics, /docs), else "unknown".
func (ct *contract) labelOf(c echo.Context, op *operation) string {
	if op != nil {
		return op.label
	}
	if p := c.Path(); p != "" && p != "/*" && !ct.underBase(p) {
		return p
	}
	return "unknown"
}

// echoPath turns /store/orders/{orderId} into /store/orders/:orderId.
func echoPath(p string) string {
	return strings.NewReplacer("{", ":", "}", "").Replace(p)
}
