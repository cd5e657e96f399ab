package api

import (
	"log/slog"
	"net/http"
	"time"
)

// HTTPServer serves handler with the service's limits, its errors logged at warn; bench/ceiling uses it too.
func HTTPServer(handler http.Handler, log *slog.Logger) *http.Server {
	return &http.Server{
		Handler:           handler,
		ReadHeaderTimeout: 5 * time.Second, // a slow or huge client must not hold a connection or memory for long
		ReadTimeout:       10 * time.Second,
		WriteTimeout:      30 * time.Second,
		IdleTimeout:       2 * time.Minute,
		MaxHeaderBytes:    MaxHeaderBytes, // Go reads 4 KiB past it; the handler refuses those exactly
		ErrorLog:          slog.NewLogLogger(log.Handler(), slog.LevelWarn),
	}
}
