// Package docs serves /docs: Swagger UI rendering the service's own documents, one per
// version of the API. Its files are embedded (swagger-ui-dist, pinned in package.json, copied
// by `make docs-assets`), so the page loads nothing from any other host.
package docs

import (
	"cmp"
	"embed"
	"encoding/json"
	"html"
	"mime"
	"net/http"
	"path"
	"strings"

	"github.com/labstack/echo/v4"
	"github.com/labstack/echo/v4/middleware"
)

// Swagger UI's files (assets/) and the page's own (page/): init.js, so that the CSP can forbid
// inline scripts, offers the documents in a selector ("?urls.primaryName=v1" picks one).
//
//go:embed assets page
var files embed.FS

// csp lets the page load its own files and send requests ("Try it out") to its own origin only.
const csp = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'"

// Router is where Register adds its routes; File serves a body that never changes.
type Router interface {
	GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
	File(path, contentType string, body []byte, m ...echo.MiddlewareFunc)
}

// Document is one document the page offers: its name in the selector ("v2") and its URL.
type Document struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Register serves the page at /docs, rendering the documents (the first one unless the
// visitor picks another), and redirects /docs/ and / to it.
func Register(e Router, documents ...Document) {
	urls, _ := json.Marshal(documents)            // structs of strings cannot fail
	index, _ := files.ReadFile("page/index.html") // embedded: cannot fail
	initJS, _ := files.ReadFile("page/init.js")
	secure := middleware.SecureWithConfig(middleware.SecureConfig{ContentSecurityPolicy: csp, XFrameOptions: "DENY"})
	e.File("/docs", echo.MIMETextHTMLCharsetUTF8, []byte(strings.Replace(string(index), "{{.}}", html.EscapeString(string(urls)), 1)), secure)
	e.File("/docs/init.js", "text/javascript; charset=utf-8", initJS, secure)
	assets, _ := files.ReadDir("assets")
	for _, f := range assets {
		body, _ := files.ReadFile("assets/" + f.Name())
		typ := cmp.Or(mime.TypeByExtension(path.Ext(f.Name())), http.DetectContentType(body))
		e.File("/docs/assets/"+f.Name(), typ, body)
	}
	// 301 for /docs/, which will always mean /docs; 302 for /, which may one day serve more.
	for from, code := range map[string]int{"/docs/": http.StatusMovedPermanently, "/": http.StatusFound} {
		e.GET(from, func(c echo.Context) error { return c.Redirect(code, "/docs") })
	}
}
