package api

import (
	"log/slog"
	"net/http"
	"time"
)

// HTTPServer is the server a handler of the service is served by, with its limits, its errors
// (a TLS handshake, a panic) logged to log at warn; bench/ceiling serves by the same, so that
// what a limit costs a request is not counted as orderd's work.
func HTTPServer(handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler: handler,
		// A slow or huge client must not hold a connection or memory for long.
		ReadHeaderTimeout: 5 * time.Second,
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    MaxHeaderBytes, // Go reads 4 KiB past it; the handler refuses those exactly
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
