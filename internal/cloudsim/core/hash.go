package core

import (
	"crypto/hmac"
	"crypto/sha256"
	"encoding/hex"
)

// SHA256Hex is the lower-case hex SHA-256 of b, as both signature
// schemes (SigV4 and TC3-HMAC-SHA256) hash payloads and canonical requests.
func SHA256Hex(b []byte) string {
	s := sha256.Sum256(b)
	return hex.EncodeToString(s[:])
}

// HMACSHA256 is one step of both schemes' signing-key derivation.
func HMACSHA256(key []byte, msg string) []byte {
	m := hmac.New(sha256.New, key)
	m.Write([]byte(msg))
	return m.Sum(nil)
}
