package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service"
)

// importData runs `orderd import`: orders and pets from the data files into Redis. Running it
// twice changes nothing, and it never undoes a cancel (see docs/redis-layout.md).
func importData(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var sc service.StoreConfig
	registerRedis(fs, &sc)
	ordersFile := fs.String("orders", "", "JSON file of orders (an array of Order with status); required")
	petsFile := fs.String("pets", "", "JSON file of pets (an array of Pet)")
	fs.Usage = flagUsage(fs, "orderd import --redis-url URL --orders FILE [--pets FILE]")
	rest, err := parseFlags(fs, args, getenv, stdout)
	if err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usageErrorf("import: unexpected argument %q", rest[0])
	case !sc.Redis() || *ordersFile == "":
		return usageErrorf("import: --redis-url and --orders are required")
	}
	// Both files are read and checked before anything is written: nothing half-imported.
	orderList, err := service.ReadOrders(*ordersFile)
	if err != nil {
		return usageError{err}
	}
	var petList []order.Pet
	if *petsFile != "" {
		if petList, err = service.ReadPets(*petsFile); err != nil {
			return usageError{err}
		}
	}
	stores, err := openStores(ctx, sc)
	if err != nil {
		return err
	}
	defer stores.Close()
	changed, err := stores.Import(ctx, orderList, petList)
	if err != nil {
		return err
	}
	fmt.Fprintf(stderr, "imported %d orders (%d fields changed) and %d pets\n", len(orderList), changed, len(petList))
	return nil
}
