package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/petstore/orderd/internal/redisstore"
)

// importData runs `orderd import`: orders and pets from the data files into Redis. Running it
// twice changes nothing, and it never undoes a cancel (see docs/redis-layout.md).
func importData(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var rc redisConfig
	rc.register(fs)
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
	case rc.url == "" || *ordersFile == "":
		return usageErrorf("import: --redis-url and --orders are required")
	}
	// Both files are read and checked before anything is written: nothing half-imported.
	orderList, err := readRecords(*ordersFile, orderValidate, orderID)
	if err != nil {
		return usageError{err}
	}
	petList, err := readRecords(*petsFile, petValidate, petID)
	if err != nil {
		return usageError{err}
	}
	rdb, err := rc.connect(ctx, true)
	if err != nil {
		return err
	}
	defer rdb.Close()
	orders, err := redisstore.NewOrders(rdb, rc.prefix, rc.timeout)
	if err != nil {
		return usageError{err}
	}
	pets, err := redisstore.NewPets(rdb, rc.prefix, rc.timeout)
	if err != nil {
		return usageError{err}
	}
	changed, err := orders.Import(ctx, orderList)
	if err != nil {
		return err
	}
	if err := pets.Import(ctx, petList); err != nil {
		return err
	}
	fmt.Fprintf(stderr, "imported %d orders (%d fields changed) and %d pets\n", len(orderList), changed, len(petList))
	return nil
}
