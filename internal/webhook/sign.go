package webhook

import (
	"crypto/hmac"
	"crypto/rand"
	"crypto/sha256"
	"encoding/base64"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// secretPrefix marks a Standard Webhooks secret; the base64 after it is the key.
const secretPrefix = "whsec_"

// The headers of a signed delivery (Standard Webhooks 1.0).
const (
	HeaderID        = "webhook-id"
	HeaderTimestamp = "webhook-timestamp"
	HeaderSignature = "webhook-signature"
)

// NewSecret returns a new whsec_ secret of 32 random bytes (the spec asks 24 to 64).
func NewSecret() string {
	key := make([]byte, 32)
	rand.Read(key) // never fails (crypto/rand)
	return secretPrefix + base64.StdEncoding.EncodeToString(key)
}

// SecretKey returns the key of a whsec_ secret: the bytes its base64 encodes.
func SecretKey(secret string) ([]byte, error) {
	key, err := base64.StdEncoding.DecodeString(strings.TrimPrefix(secret, secretPrefix))
	if err != nil || !strings.HasPrefix(secret, secretPrefix) || len(key) == 0 {
		return nil, fmt.Errorf("webhook secret: want %s and base64", secretPrefix)
	}
	return key, nil
}

// Sign returns the webhook-signature of body sent as message id at t: "v1," and the base64
// HMAC-SHA256, under key, of "id.timestamp.body".
func Sign(key []byte, id string, t time.Time, body []byte) string {
	mac := hmac.New(sha256.New, key)
	mac.Write([]byte(id + "." + strconv.FormatInt(t.Unix(), 10) + "."))
	mac.Write(body)
	return "v1," + base64.StdEncoding.EncodeToString(mac.Sum(nil))
}
