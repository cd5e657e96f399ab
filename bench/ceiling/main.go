// Command ceiling is the benchmark's ceiling: the same echo stack as orderd with no
// middleware, answering precomputed bytes of the same order list (and of the same errors).
// No service that does its work can be faster; make bench reports orderd as a ratio of it.
package main

import (
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"

	"github.com/labstack/echo/v4"

	"github.com/petstore/orderd/internal/jsonfile"
	"github.com/petstore/orderd/internal/order"
)

func main() {
	addr := flag.String("addr", "127.0.0.1:18200", "address to listen on")
	ordersFile := flag.String("orders", "", "JSON file of orders, as orderd reads it")
	flag.Parse()
	orders, err := jsonfile.ReadArray[order.Order](*ordersFile, nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(2)
	}
	list, _ := json.Marshal(orders)
	notFound := []byte(`{"code":"order_not_found","message":"order 999999999: no such order","status":404}`)
	unauthorized := []byte(`{"code":"unauthorized","message":"no API key: send the header Authorization: Bearer API_KEY","status":401}`)

	e := echo.New()
	e.HideBanner, e.HidePort = true, true
	e.Logger.SetOutput(io.Discard)
	e.GET("/v1/store/orders", func(c echo.Context) error {
		if c.Request().Header.Get("Authorization") == "" {
			return c.Blob(http.StatusUnauthorized, echo.MIMEApplicationJSON, unauthorized)
		}
		return c.Blob(http.StatusOK, echo.MIMEApplicationJSON, list)
	})
	e.DELETE("/v1/store/orders/:orderId", func(c echo.Context) error {
		return c.Blob(http.StatusNotFound, echo.MIMEApplicationJSON, notFound)
	})
	fmt.Fprintln(os.Stderr, "ceiling listening on", *addr)
	if err := http.ListenAndServe(*addr, e); err != nil {
		fmt.Fprintln(os.Stderr, "ceiling:", err)
		os.Exit(1)
	}
}
