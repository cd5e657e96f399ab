// Package docs serves /docs: Swagger UI rendering the service's own documents, one per
// version of the API, with a selector in its top bar (the newest first). Its files
// are embedded in the binary (copied from the npm package swagger-ui-dist, pinned in
// package.json, by `make docs-assets`), so the page loads nothing from any other host.
package docs

import (
	"embed"
	"encoding/json"
	"html/template"
	"net/http"
	"strings"

	"github.com/labstack/echo/v4"
)

//go:embed assets
var assets embed.FS

var page = template.Must(template.New("docs").Parse(`<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>Store Order Service API</title>
<link rel="stylesheet" href="/docs/assets/swagger-ui.css">
</head>
<body>
<div id="swagger-ui" data-documents="{{.}}"></div>
<script src="/docs/assets/swagger-ui-bundle.js"></script>
<script src="/docs/assets/swagger-ui-standalone-preset.js"></script>
<script src="/docs/init.js"></script>
</body>
</html>
`))

// init.js is a file of its own so that the page's Content-Security-Policy can forbid inline
// scripts.
// The standalone layout is Swagger UI's own way to offer several documents: a selector in
// its top bar; "?urls.primaryName=v1" in the page's address picks one.
const initJS = `window.ui = SwaggerUIBundle({
  urls: JSON.parse(document.getElementById("swagger-ui").dataset.documents),
  dom_id: "#swagger-ui",
  deepLinking: true,
  displayOperationId: true,
  presets: [SwaggerUIBundle.presets.apis, SwaggerUIStandalonePreset],
  layout: "StandaloneLayout"
});
`

// csp lets the page load only its own files and send requests only to its own origin:
// "Try it out" sends them to the document's first server, the relative /v1 of this instance
// (connect-src is stated, not left to default-src, because it is the one the page needs).
const csp = "default-src 'self'; connect-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; script-src 'self'"

// Router is where Register adds its routes: an *echo.Echo, or a wrapper of one.
type Router interface {
	GET(path string, h echo.HandlerFunc, m ...echo.MiddlewareFunc) *echo.Route
}

// Document is one document the page offers: its name in the selector ("v2") and its URL.
type Document struct {
	Name string `json:"name"`
	URL  string `json:"url"`
}

// Register serves the page at /docs, rendering the documents (the first one unless the
// visitor picks another), and redirects /docs/ and / to it.
func Register(e Router, documents ...Document) {
	urls, err := json.Marshal(documents)
	if err != nil {
		panic(err) // structs of strings cannot fail
	}
	var b strings.Builder
	if err := page.Execute(&b, string(urls)); err != nil {
		panic(err) // a constant template and a string cannot fail
	}
	html := b.String()
	secure := func(c echo.Context) {
		h := c.Response().Header()
		h.Set("Content-Security-Policy", csp)
		h.Set("X-Frame-Options", "DENY")
	}
	e.GET("/docs", func(c echo.Context) error {
		secure(c)
		return c.HTML(http.StatusOK, html)
	})
	// /docs/ is the same page by another name, and / has nothing of its own: both send the
	// visitor to /docs (301 for the one that will always mean /docs, 302 for the root,
	// which may one day serve something else).
	e.GET("/docs/", func(c echo.Context) error {
		return c.Redirect(http.StatusMovedPermanently, "/docs")
	})
	e.GET("/", func(c echo.Context) error {
		return c.Redirect(http.StatusFound, "/docs")
	})
	e.GET("/docs/init.js", func(c echo.Context) error {
		secure(c)
		return c.Blob(http.StatusOK, "text/javascript; charset=utf-8", []byte(initJS))
	})
	files := http.FileServer(http.FS(assets))
	e.GET("/docs/assets/*", echo.WrapHandler(http.StripPrefix("/docs", files)))
}
