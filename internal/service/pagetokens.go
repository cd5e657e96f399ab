package service

import "github.com/petstore/orderd/internal/pagetoken"

// pageTokens returns the codec of v2's page tokens: under secret when it is set (a setting
// every instance must share), otherwise under the secret the stores hold, which every
// instance on them shares without being told. A secret too short is a *ConfigError.
func pageTokens(secret string, s *Stores) (*pagetoken.Codec, error) {
	if secret == "" {
		return pagetoken.FromStore(s.Secrets), nil
	}
	c, err := pagetoken.New([]byte(secret))
	if err != nil {
		return nil, configError(err)
	}
	return c, nil
}
