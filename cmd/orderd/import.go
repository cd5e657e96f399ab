package main

import (
	"context"
	"flag"
	"fmt"
	"io"

	"github.com/petstore/orderd/internal/jsonfile"
	"github.com/petstore/orderd/internal/order"
	"github.com/petstore/orderd/internal/service"
)

// importData runs `orderd import`: the data files into the store, by service.Stores.Import.
func importData(ctx context.Context, args []string, getenv func(string) string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("import", flag.ContinueOnError)
	var sc service.StoreConfig
	registerStore(fs, &sc)
	ordersFile := fs.String("orders", "", "JSON file of orders (an array of Order with status); required")
	petsFile := fs.String("pets", "", "JSON file of pets (an array of Pet)")
	fs.Usage = flagUsage(fs, "orderd import --orders FILE [--pets FILE] [--db FILE | --redis-url URL]")
	rest, err := parseFlags(fs, args, getenv, stdout)
	if err != nil {
		return err
	}
	if err := checkStoreFlags(fs.Name(), sc); err != nil {
		return err
	}
	switch {
	case len(rest) > 0:
		return usageErrorf("import: unexpected argument %q", rest[0])
	case *ordersFile == "":
		return usageErrorf("import: --orders is required")
	}
	// Both files are read and checked before the store is opened, which may create the file,
	// then read again as they are written: neither is held whole. Each record is checked as
	// it is read; the first refused is named by file:line:column.
	var orders order.Batches[order.Order] = jsonfile.File[order.Order](*ordersFile, service.ImportBatch)
	pets := order.Slice[order.Pet](nil, 1)
	if *petsFile != "" {
		pets = jsonfile.File[order.Pet](*petsFile, service.ImportBatch)
	}
	var nOrders, nPets int
	if err := orders(order.CheckEach[order.Order](), func(b []order.Order) error { nOrders += len(b); return nil }); err != nil {
		return usageError{err}
	}
	if err := pets(order.CheckEach[order.Pet](), func(b []order.Pet) error { nPets += len(b); return nil }); err != nil {
		return usageError{err}
	}
	sc.CreateDB = true
	stores, err := openStores(ctx, sc)
	if err != nil {
		return err
	}
	defer stores.Close()
	// The decoding goes a batch or two ahead of the writes, in a goroutine of its own.
	n, err := stores.ImportBatches(ctx, order.ReadAhead(orders, 2), order.ReadAhead(pets, 2))
	if err != nil {
		return err
	}
	if stores.Mode() == "redis" {
		fmt.Fprintf(stderr, "imported %d orders (%d fields changed) and %d pets\n", nOrders, n.OrderFieldsChanged, nPets)
		return nil
	}
	fmt.Fprintf(stderr, "imported %d orders (%d added, %d updated) and %d pets (%d added, %d updated) into %s\n",
		nOrders, n.OrdersAdded, n.OrdersUpdated, nPets, n.PetsAdded, n.PetsUpdated, sc.DB)
	return nil
}
