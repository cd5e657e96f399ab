package keyfile_test

import (
	"path/filepath"
	"testing"

	"github.com/petstore/orderd/internal/auth"
	"github.com/petstore/orderd/internal/auth/authtest"
	"github.com/petstore/orderd/internal/keyfile"
)

func TestConformance(t *testing.T) {
	authtest.Run(t, func(tb testing.TB) auth.KeyStore {
		s, err := keyfile.Open(filepath.Join(tb.TempDir(), "keys.json"), true)
		if err != nil {
			tb.Fatal(err)
		}
		return s
	})
}
