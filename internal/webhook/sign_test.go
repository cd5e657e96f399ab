package webhook_test

import (
	"net/http"
	"strconv"
	"testing"
	"time"

	standardwebhooks "github.com/standard-webhooks/standard-webhooks/libraries/go"

	"github.com/petstore/orderd/internal/webhook"
)

// TestSignMatchesTheSpecsExample: the secret, message, time and payload of the Standard
// Webhooks libraries' own test give their signature.
func TestSignMatchesTheSpecsExample(t *testing.T) {
	key, err := webhook.SecretKey("whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw")
	if err != nil {
		t.Fatal(err)
	}
	got := webhook.Sign(key, "msg_p5jXN8AQM9LWM0D4loKWxJek", time.Unix(1614265330, 0), []byte(`{"test": 2432232314}`))
	if want := "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE="; got != want {
		t.Fatalf("Sign = %s, want %s", got, want)
	}
}

// TestTheReferenceVerifierAcceptsOurSignatures: the Standard Webhooks Go library verifies a
// signature made under a secret of NewSecret, and refuses it for another body.
func TestTheReferenceVerifierAcceptsOurSignatures(t *testing.T) {
	secret := webhook.NewSecret()
	key, err := webhook.SecretKey(secret)
	if err != nil || len(key) != 32 {
		t.Fatalf("SecretKey(%s) = %d bytes, %v", secret, len(key), err)
	}
	wh, err := standardwebhooks.NewWebhook(secret)
	if err != nil {
		t.Fatal(err)
	}
	now, body := time.Now(), []byte(`{"id":"7","type":"order.cancelled"}`)
	h := http.Header{}
	h.Set(webhook.HeaderID, "7")
	h.Set(webhook.HeaderTimestamp, strconv.FormatInt(now.Unix(), 10))
	h.Set(webhook.HeaderSignature, webhook.Sign(key, "7", now, body))
	if err := wh.Verify(body, h); err != nil {
		t.Fatalf("Verify: %v", err)
	}
	if err := wh.Verify([]byte(`{"id":"8"}`), h); err == nil {
		t.Fatal("Verify accepted another body")
	}
}

func TestSecretKeyRefusesOtherForms(t *testing.T) {
	for _, s := range []string{"", "whsec_", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "whsec_not base64!"} {
		if _, err := webhook.SecretKey(s); err == nil {
			t.Errorf("SecretKey(%q) succeeded", s)
		}
	}
}
